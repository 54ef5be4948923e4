/**
 * Transitions racing each other on the real database: the expirer's row locks (SELECT … FOR
 * UPDATE, taken before it decides) are what keep a decision true until it commits.
 *
 *   a payment commits while a cancel batch waits on the order's lock → the order stays PAID,
 *                                                                      no ORDER_CANCELLED
 *   two batches over the same coupons at once                        → each coupon expired by
 *                                                                      one of them, one event
 *
 * Each race is made deterministic: a separate connection holds the contested row locks in an
 * open transaction, the test waits until the batches are seen blocked in the server's process
 * list, then lets go. In a database of this file's own, so the process list and counts are ours.
 *
 * @mysql
 * @lane isolated
 */
import { join } from 'node:path';
import type { Knex } from 'knex';
import type { Db } from '../../../src/db/knex';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { loadEntities } from '../../../src/ops/load-entities';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { eventWriter } from '../../support/event-writer';
import { outboxEvents } from '../../support/outbox-rows';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor, withTimeout } from '../../support/wait-for';

let testDb: TestDatabase;
let db: Db;
let batches: ReturnType<typeof createTransitionBatches>;
const catalogue = loadEntities(join(__dirname, '../../../entities/default.json'));
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');

beforeAll(async () => {
  testDb = await createTestDatabase('racing');
  db = testDb.db;
  batches = createTransitionBatches(db, catalogue, { outbox: await eventWriter(db, catalogue) });
});

afterAll(async () => {
  await testDb?.drop();
});

beforeEach(async () => {
  await db.raw('DELETE FROM event_outbox');
  await db.raw('DELETE FROM orders');
  await db.raw('DELETE FROM coupons');
});

type Entry = { id: string; expireAtMs: number };

/** Inserts `count` rows already due by the database clock; returns them as scheduled entries. */
async function insertDue(table: 'coupons' | 'orders', status: string, count: number): Promise<Entry[]> {
  await db(table).insert(Array.from({ length: count }, () => ({ user_id: 9, status, expire_time: db.raw('NOW(3) - INTERVAL 1 SECOND') })));
  const rows = (await db(table).orderBy('id').select('id', 'expire_time')) as Array<{ id: number; expire_time: Date }>;
  return rows.map((r) => ({ id: String(r.id), expireAtMs: r.expire_time.getTime() }));
}

/**
 * Waits until `n` statements on `table` of this database are executing on connections other
 * than `holder`'s and this poll's: with `holder` sitting idle on its locks, they are waiting for them.
 */
async function blockedOn(holder: Knex.Transaction, table: string, n: number): Promise<void> {
  const [[{ holderId }]] = (await holder.raw('SELECT CONNECTION_ID() AS holderId')) as [[{ holderId: number }]];
  await waitFor(
    `${n} statements waiting for locks on ${table}`,
    async () => {
      const [rows] = (await db.raw(
        `SELECT id FROM information_schema.processlist
        WHERE db = ? AND command = 'Query' AND id NOT IN (CONNECTION_ID(), ?) AND info LIKE ?`,
        [testDb.name, holderId, `%${table}%`],
      )) as [Array<{ id: number }>];
      return rows.length === n ? true : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
}

test('an order paid while its cancel batch waits for the row lock stays PAID, with no ORDER_CANCELLED', async () => {
  const [order] = (await insertDue('orders', 'UNPAID', 1)) as [Entry];

  // The payment: holds the order's row lock, uncommitted, while the cancel batch starts.
  const payment = await db.transaction();
  let batch: Promise<BatchOutcome> | undefined;
  try {
    await payment.raw("UPDATE orders SET status = 'PAID', version = version + 1 WHERE id = ? AND status = 'UNPAID'", [order.id]);
    batch = batches.run(orderCancelled, [order], 'stream');
    await blockedOn(payment, 'orders', 1);
    await payment.commit();
  } finally {
    if (!payment.isCompleted()) await payment.rollback();
  }
  const outcome = await withTimeout('the cancel batch after the payment', batch!);

  expect(outcome.transitioned).toEqual([]);
  expect(outcome.stale).toEqual([order]);
  await expect(db('orders').where({ id: order.id }).first()).resolves.toMatchObject({ status: 'PAID', cancel_time: null, cancel_reason: null, version: 1 });
  await expect(db('event_outbox').count({ n: '*' })).resolves.toEqual([{ n: 0 }]);
});

test('two expiry batches over the same coupons at once: each coupon expired by one of them, one event_outbox row each, version 1', async () => {
  const coupons = await insertDue('coupons', 'ACTIVE', 50);
  const ids = coupons.map((c) => c.id);

  // Both batches start while a third connection holds every row lock, so neither can finish
  // its transaction before the other has begun: they really run at once.
  const gate = await db.transaction();
  let both: Promise<[BatchOutcome, BatchOutcome]> | undefined;
  try {
    await gate.raw('SELECT id FROM coupons WHERE id IN (?) FOR UPDATE', [ids]);
    both = Promise.all([batches.run(couponExpired, coupons, 'stream'), batches.run(couponExpired, [...coupons].reverse(), 'replay')]);
    await blockedOn(gate, 'coupons', 2);
    await gate.commit();
  } finally {
    if (!gate.isCompleted()) await gate.rollback();
  }
  const [a, b] = await withTimeout('both expiry batches', both!);

  // Exactly one batch transitioned each coupon; the other found it stale.
  const byA = a.transitioned.map((t) => t.id);
  const byB = b.transitioned.map((t) => t.id);
  expect([...byA, ...byB].sort()).toEqual([...ids].sort());
  expect(byA.filter((id) => byB.includes(id))).toEqual([]);
  expect(a.stale.map((e) => e.id).sort()).toEqual([...byB].sort());
  expect(b.stale.map((e) => e.id).sort()).toEqual([...byA].sort());

  const rows = (await db('coupons').orderBy('id').select('id', 'status', 'version')) as Array<{ id: number; status: string; version: number }>;
  expect(rows).toEqual(coupons.map((c) => ({ id: Number(c.id), status: 'EXPIRED', version: 1 })));
  // entity_id is the id's text: ordered by the id's value here.
  const outbox = (await outboxEvents(db, catalogue)).sort((x, y) => Number(BigInt(x.entityId) - BigInt(y.entityId)));
  // Each key ends with the database time of the batch that did it.
  const batchTime = (id: string) => (byA.includes(id) ? a.dbNowMs : b.dbNowMs);
  expect(outbox.map((r) => [r.entityId, r.eventKey])).toEqual(coupons.map((c) => [c.id, `coupon-expired-${c.id}-${c.expireAtMs}-${batchTime(c.id)}`]));
  // Each event says which batch did it, and that batch is the one that reported the transition.
  const path = new Map(outbox.map((r) => [r.entityId, r.payload['path']]));
  expect(ids.filter((id) => path.get(id) !== (byA.includes(id) ? 'stream' : 'replay'))).toEqual([]);
});
