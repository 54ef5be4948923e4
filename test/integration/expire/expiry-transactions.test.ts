/**
 * The expirer's transactions against the real database: guarded by the database clock,
 * idempotent on replay, strict about the state machines, one event_outbox row per event_key.
 *
 * In a database of this file's own, emptied before each test: every count is exact.
 *
 * @mysql
 * @lane isolated
 */
import { join } from 'node:path';
import type { Db } from '../../../src/db/knex';
import { eventKeyOf, transitionOf } from '../../../src/core/entity-catalogue';
import type { EventPayload, ExpiryPath } from '../../../src/core/events';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import type { OutboxInsert, OutboxWriter } from '../../../src/publish/outbox-writer';
import { loadEntities } from '../../../src/ops/load-entities';
import { eventWriter } from '../../support/event-writer';
import { outboxEvents, type OutboxEvent } from '../../support/outbox-rows';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

const catalogue = loadEntities(join(__dirname, '../../../entities/default.json'));
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');

let testDb: TestDatabase;
let db: Db;
let outbox: OutboxWriter;
let expireCoupons: (entries: readonly ScheduledEntry[], path: ExpiryPath) => Promise<BatchOutcome>;
let cancelOrders: typeof expireCoupons;

beforeAll(async () => {
  testDb = await createTestDatabase('expiry_tx');
  db = testDb.db;
  outbox = await eventWriter(db, catalogue);
  const batches = createTransitionBatches(db, catalogue, { outbox });
  expireCoupons = (entries, path) => batches.run(couponExpired, entries, path);
  cancelOrders = (entries, path) => batches.run(orderCancelled, entries, path);
});

afterAll(async () => {
  await testDb?.drop();
});

beforeEach(async () => {
  await db.raw('DELETE FROM event_outbox');
  await db.raw('DELETE FROM orders');
  await db.raw('DELETE FROM coupons');
});

/** Inserts a row whose expire_time is `offsetMs` from the database's NOW(3); returns id and expire time. */
async function insertRow(table: 'coupons' | 'orders', values: Record<string, unknown>, offsetMs: number): Promise<{ id: string; expireAtMs: number }> {
  const [id] = await db(table).insert({ user_id: 9, ...values, expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [offsetMs * 1000]) });
  const row = (await db(table).where({ id }).first()) as { expire_time: Date };
  return { id: String(id), expireAtMs: row.expire_time.getTime() };
}

/** Every event of this database's event_outbox, decoded, oldest first. */
async function outboxRows(): Promise<OutboxEvent[]> {
  return outboxEvents(db, catalogue);
}

test('a due coupon expires once, with exactly the COUPON_EXPIRED payload of the default file; replaying the batch changes nothing', async () => {
  const coupon = await insertRow('coupons', { status: 'ACTIVE' }, -1_000);

  const first = await expireCoupons([coupon], 'stream');
  expect(first.transitioned).toEqual([{ id: coupon.id, dueAtMs: coupon.expireAtMs }]);
  const row = (await db('coupons').where({ id: coupon.id }).first()) as { status: string; expired_at: Date; version: number };
  expect(row.status).toBe('EXPIRED');
  expect(row.version).toBe(1);
  expect(row.expired_at.getTime()).toBeGreaterThanOrEqual(coupon.expireAtMs);

  const key = `coupon-expired-${coupon.id}-${coupon.expireAtMs}-${first.dbNowMs}`;
  const events = await outboxRows();
  expect(events.map((e) => e.eventKey)).toEqual([key]);
  // The db clock of the transaction stamped both expired_at and occurred_at (I2).
  expect(row.expired_at.getTime()).toBe(first.dbNowMs);
  expect(events[0]!.payload).toEqual({
    event_key: key,
    event_type: 'COUPON_EXPIRED',
    coupon_id: coupon.id,
    user_id: '9',
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    due_at: coupon.expireAtMs,
    occurred_at: first.dbNowMs,
    path: 'stream',
    version: '1',
  });

  const replay = await expireCoupons([coupon], 'replay');
  expect(replay.transitioned).toEqual([]);
  expect(replay.stale).toEqual([coupon]);
  await expect(outboxRows()).resolves.toEqual(events);
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'EXPIRED', version: 1 });
});

test('a coupon not yet due by the database clock is rescheduled, not expired', async () => {
  const coupon = await insertRow('coupons', { status: 'ACTIVE' }, 60_000);
  const outcome = await expireCoupons([coupon], 'stream');
  expect(outcome.transitioned).toEqual([]);
  expect(outcome.notYetDue).toHaveLength(1);
  expect(outcome.notYetDue[0]!.entry).toEqual(coupon);
  expect(outcome.notYetDue[0]!.retryInMs).toBeGreaterThan(50_000);
  expect(outcome.notYetDue[0]!.retryInMs).toBeLessThanOrEqual(60_000);
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'ACTIVE', expired_at: null, version: 0 });
  await expect(outboxRows()).resolves.toEqual([]);
});

test('an entry superseded by a later expire_time, a used coupon and a locked coupon are stale', async () => {
  const pushed = await insertRow('coupons', { status: 'ACTIVE' }, 3_600_000);
  const used = await insertRow('coupons', { status: 'USED' }, -1_000);
  const locked = await insertRow('coupons', { status: 'LOCKED', locked_order_id: 1 }, -1_000);
  const oldEntry = { id: pushed.id, expireAtMs: pushed.expireAtMs - 3_600_000 };

  const outcome = await expireCoupons([oldEntry, used, locked], 'stream');
  expect(outcome.transitioned).toEqual([]);
  expect(outcome.notYetDue).toEqual([]);
  expect(outcome.stale).toEqual([oldEntry, used, locked]);
  const statuses = await db('coupons').whereIn('id', [pushed.id, used.id, locked.id]).orderBy('id').pluck('status');
  expect(statuses).toEqual(['ACTIVE', 'USED', 'LOCKED']);
  await expect(outboxRows()).resolves.toEqual([]);
});

test('a due unpaid order is cancelled and releases its locked coupon in the same transaction, with exactly the ORDER_CANCELLED payload', async () => {
  const order = await insertRow('orders', { status: 'UNPAID' }, -500);
  const coupon = await insertRow('coupons', { status: 'LOCKED', locked_order_id: order.id }, 3_600_000);
  await db('orders').where({ id: order.id }).update({ coupon_id: coupon.id });
  const paid = await insertRow('orders', { status: 'PAID' }, -500);

  const outcome = await cancelOrders([order, paid], 'stream');
  expect(outcome.transitioned).toEqual([{ id: order.id, dueAtMs: order.expireAtMs }]);
  expect(outcome.stale).toEqual([paid]);

  await expect(db('orders').where({ id: order.id }).first()).resolves.toMatchObject({ status: 'CANCELLED', cancel_reason: 'TIMEOUT', version: 1 });
  await expect(db('orders').where({ id: paid.id }).first()).resolves.toMatchObject({ status: 'PAID' });
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'ACTIVE', locked_order_id: null, version: 1 });

  const events = await outboxRows();
  expect(events.map((e) => e.eventKey)).toEqual([`order-cancelled-${order.id}-${order.expireAtMs}-${outcome.dbNowMs}`]);
  expect(events[0]!.payload).toEqual({
    event_key: `order-cancelled-${order.id}-${order.expireAtMs}-${outcome.dbNowMs}`,
    event_type: 'ORDER_CANCELLED',
    order_id: order.id,
    user_id: '9',
    from_status: 'UNPAID',
    to_status: 'CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: coupon.id,
    coupon_released: true,
    due_at: order.expireAtMs,
    occurred_at: outcome.dbNowMs,
    path: 'stream',
    version: '1',
  });
  await expect(db('orders').where({ id: order.id }).first()).resolves.toMatchObject({ cancel_time: new Date(outcome.dbNowMs) });

  const replay = await cancelOrders([order], 'replay');
  expect(replay.transitioned).toEqual([]);
  await expect(outboxRows()).resolves.toEqual(events);
});

test('a coupon expired, put back to ACTIVE with the same expire_time and expired again: two transitions, two events, two keys; a replay of either writes none', async () => {
  const coupon = await insertRow('coupons', { status: 'ACTIVE' }, -1_000);
  const first = await expireCoupons([coupon], 'stream');
  expect(first.transitioned).toEqual([{ id: coupon.id, dueAtMs: coupon.expireAtMs }]);
  // Support restores it; the due time stays.
  await db('coupons').where({ id: coupon.id }).update({ status: 'ACTIVE', expired_at: null });
  const second = await expireCoupons([coupon], 'stream');
  expect(second.transitioned).toEqual([{ id: coupon.id, dueAtMs: coupon.expireAtMs }]);
  expect(second.dbNowMs).toBeGreaterThan(first.dbNowMs);

  const events = await outboxRows();
  expect(events.map((e) => e.eventKey)).toEqual([
    `coupon-expired-${coupon.id}-${coupon.expireAtMs}-${first.dbNowMs}`,
    `coupon-expired-${coupon.id}-${coupon.expireAtMs}-${second.dbNowMs}`,
  ]);
  expect(events.map((e) => e.payload['occurred_at'])).toEqual([first.dbNowMs, second.dbNowMs]);
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'EXPIRED', version: 2 });

  const replay = await expireCoupons([coupon, coupon], 'replay');
  expect(replay.transitioned).toEqual([]);
  await expect(outboxRows()).resolves.toEqual(events);
});

test('a transition whose event the outbox does not take rolls back: the row stays, and the failure is retriable', async () => {
  const coupon = await insertRow('coupons', { status: 'ACTIVE' }, -1_000);
  // An outbox that takes nothing, as INSERT IGNORE would for a key already there (a second
  // transition of the row within the same millisecond, the one way two could share a key).
  const takingNothing = createTransitionBatches(db, catalogue, { outbox: async () => 0 });
  await expect(takingNothing.run(couponExpired, [coupon], 'stream')).rejects.toMatchObject({ name: 'EventNotWritten', retriable: true });
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'ACTIVE', version: 0 });
  await expect(expireCoupons([coupon], 'stream')).resolves.toMatchObject({ transitioned: [{ id: coupon.id, dueAtMs: coupon.expireAtMs }] });
});

test('the same event written twice through the outbox writer leaves one row: the first', async () => {
  // The guarded UPDATE never lets a replayed batch get this far; this leans on the unique
  // event_key alone (uq_event_outbox_event_key, invariant I4).
  const event: EventPayload = {
    event_key: eventKeyOf(couponExpired, '42', 1_700_000_000_123, 1_700_000_000_200),
    event_type: 'COUPON_EXPIRED',
    coupon_id: '42',
    user_id: '9',
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    due_at: 1_700_000_000_123,
    occurred_at: 1_700_000_000_200,
    path: 'stream',
    version: 1,
  };
  const row: OutboxInsert = { event, entityType: 'coupon', entityId: '42' };
  // A later replay of the same transition: same event_key, different payload.
  const replayed: OutboxInsert = { ...row, event: { ...event, occurred_at: 1_700_000_009_000, path: 'replay' } };

  const inserted = [
    await db.transaction((trx) => outbox(trx, [row])),
    await db.transaction((trx) => outbox(trx, [row])),
    await db.transaction((trx) => outbox(trx, [replayed, row])),
  ];
  expect(inserted).toEqual([1, 0, 0]);
  const rows = await outboxRows();
  expect(rows.map((r) => r.eventKey)).toEqual([event.event_key]);
  // The first payload, decoded (its longs as decimal strings).
  expect(rows[0]!.payload).toEqual({ ...event, version: '1' });
});
