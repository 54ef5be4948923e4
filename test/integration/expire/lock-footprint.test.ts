/**
 * What an expiry transaction keeps locked while it runs, and so what it can block: finding 7 of
 * the reliability review. Each test pauses a real expiry transaction at its event_outbox insert (a
 * transaction of the test holds the gap its event_key goes into, so the insert waits on it) and checks
 * that the application's own writes, and the other expiry path, still go through meanwhile:
 *   - a checkout writing locked_order_id next to an order being cancelled (REPEATABLE READ's
 *     gap locks on the sparse locked_order_id index would block it);
 *   - the cancellation of an order whose LOCKED coupon sits in a coupon-expiry batch (a lock on
 *     a row the batch cannot expire is what let the two paths deadlock).
 *
 * @mysql
 * @lane isolated
 */
import { join } from 'node:path';
import type { Knex } from 'knex';
import { eventKeyOf, transitionOf, type Transition } from '../../../src/core/entity-catalogue';
import { loadEntities } from '../../../src/ops/load-entities';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { eventWriter } from '../../support/event-writer';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor, withTimeout } from '../../support/wait-for';
import { dbRoot } from '../../support/stack-control';
import { stackFlavour, withLockWait } from '../../support/stack-flavour';

let testDb: TestDatabase;
let db: Knex;
let batches: ReturnType<typeof createTransitionBatches>;
const catalogue = loadEntities(join(__dirname, '../../../entities/default.json'));
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');

beforeAll(async () => {
  testDb = await createTestDatabase('lock_footprint');
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

/** The key of any transition of the row at that due time, less its database time. */
const eventKeyPrefix = (t: Transition, id: string, dueAtMs: number) => eventKeyOf(t, id, dueAtMs, 0).slice(0, -1);

async function insert(table: 'coupons' | 'orders', row: Record<string, unknown>): Promise<string> {
  const [id] = await db(table).insert(row);
  return String(id);
}

async function expireAtMs(table: 'coupons' | 'orders', id: string): Promise<number> {
  const [r] = await db(table).where({ id }).select('expire_time');
  return (r as { expire_time: Date }).expire_time.getTime();
}

/**
 * Holds the gap of event_outbox's event_key index where the keys starting with `prefix` go, in an
 * open transaction: an expiry inserting such a key waits on it, every other insert goes through.
 * A transition's key ends with its transaction's database time, unknown beforehand; its row and
 * due time, so the prefix, are known. Two committed rows just below and just above every such
 * key bound the gap a locking read of the range takes (REPEATABLE READ), so no other key's
 * insert falls into it.
 */
async function blockOutboxKeys(prefix: string): Promise<Knex.Transaction> {
  // A letter above: every key of the prefix continues with digits, which sort below letters under
  // every collation (under MySQL's utf8mb4_0900_ai_ci punctuation such as '~' sorts below digits).
  const bounds = [prefix, `${prefix}a`];
  await db('event_outbox').insert(
    bounds.map((key) => ({
      event_key: key,
      topic: 'bound',
      entity_id: '0',
      event_type: 'BOUND',
      ce_type: 'bound',
      ce_time: '1970-01-01T00:00:00.000Z',
      ce_dataschema: 'bound',
      payload: Buffer.alloc(0),
    })),
  );
  const trx = await db.transaction({ isolationLevel: 'repeatable read' });
  // FORCE INDEX: on a table of a few rows the optimizer may prefer a scan of the whole table,
  // which under REPEATABLE READ locks every gap of it, and then every insert waits (the
  // cancellation's too): a plan chosen by statistics that were refreshed after the last test's
  // DELETE, or not yet. Seen once in CI as the cancellation "blocked" for 5 s.
  await trx.raw('SELECT id FROM event_outbox FORCE INDEX (uq_event_outbox_event_key) WHERE event_key > ? AND event_key < ? FOR UPDATE', bounds);
  return trx;
}

/** Resolves once some session of this database is running `INSERT IGNORE INTO event_outbox` (waiting). */
async function expiryWaitingAtOutbox(): Promise<void> {
  await waitFor(
    'the expiry transaction to reach its event_outbox insert',
    async () => {
      const [rows] = (await db.raw('SHOW FULL PROCESSLIST')) as [Array<{ db: string | null; Info: string | null }>];
      return rows.some((r) => r.db === testDb.name && (r.Info ?? '').startsWith('INSERT IGNORE INTO event_outbox')) ? true : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 50 },
  );
}

/**
 * Transactions of this database waiting for a lock now (information_schema.INNODB_TRX, which
 * needs the PROCESS privilege: read as the stack's root), by id, with their statements.
 */
function lockWaits(): Map<string, string> {
  // On MySQL INNODB_TRX and PROCESSLIST fail as a whole when a statement's text holds bytes
  // their utf8mb3 columns cannot (event_outbox's payload): performance_schema's lock waits name
  // the waiting transaction and its thread instead.
  const out = dbRoot(
    stackFlavour() === 'mysql'
      ? `SELECT w.REQUESTING_ENGINE_TRANSACTION_ID, CONCAT('thread ', t.PROCESSLIST_ID, ' waits on ', w.BLOCKING_ENGINE_TRANSACTION_ID) FROM performance_schema.data_lock_waits w JOIN performance_schema.threads t ON t.THREAD_ID = w.REQUESTING_THREAD_ID WHERE t.PROCESSLIST_DB = '${testDb.name}'`
      : `SELECT t.trx_id, REPLACE(REPLACE(COALESCE(t.trx_query, ''), '\\t', ' '), '\\n', ' ') FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE t.trx_state = 'LOCK WAIT' AND p.DB = '${testDb.name}'`,
  );
  return new Map(
    out
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => [l.split('\t')[0]!, l.split('\t').slice(1).join(' ')]),
  );
}

/**
 * `work` completes without ever waiting for a lock: polled until it settles, any lock wait of a
 * transaction other than those already waiting (`known`, the paused expiry) fails it, with the
 * statement that waited. A block shows as a wait at once (it would last until the test's own
 * transaction ends), so no duration is asserted: a slow machine only makes this take longer.
 */
async function completesUnblocked<T>(description: string, work: Promise<T>, known: ReadonlySet<string>): Promise<T> {
  let settled = false;
  const done = work.finally(() => (settled = true));
  const watch = (async () => {
    while (!settled) {
      const blocked = [...lockWaits()].filter(([id]) => !known.has(id));
      if (blocked.length > 0 && !settled) throw new Error(`${description} waited for a lock: ${blocked.map(([, q]) => q.slice(0, 200)).join('; ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const [result] = await Promise.all([withTimeout(description, done, 120_000), watch]);
  return result;
}

test('a checkout writing locked_order_id is not blocked by an order cancellation in flight', async () => {
  const coupon = await insert('coupons', { user_id: 1, status: 'LOCKED', expire_time: db.raw('NOW(3) + INTERVAL 1 DAY') });
  const order = await insert('orders', { user_id: 1, status: 'UNPAID', coupon_id: coupon, expire_time: db.raw('NOW(3) - INTERVAL 1 SECOND') });
  await db('coupons').where({ id: coupon }).update({ locked_order_id: order });
  const freeCoupon = await insert('coupons', { user_id: 2, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 1 DAY') });
  const nextOrder = await insert('orders', { user_id: 2, status: 'UNPAID', expire_time: db.raw('NOW(3) + INTERVAL 1 DAY') });

  const blocker = await blockOutboxKeys(eventKeyPrefix(orderCancelled, order, await expireAtMs('orders', order)));
  const cancelling = batches.run(orderCancelled, [{ id: order, expireAtMs: await expireAtMs('orders', order) }], 'stream');
  try {
    await expiryWaitingAtOutbox();
    // The checkout: another user's coupon locked by their new order, whose id sorts right
    // after the order being cancelled in the locked_order_id index. It must not wait.
    const checkout = db
      .raw(withLockWait("UPDATE coupons SET status = 'LOCKED', locked_order_id = ? WHERE id = ? AND status = 'ACTIVE'", 2), [nextOrder, freeCoupon])
      .then(([result]: [{ affectedRows: number }]) => result.affectedRows);
    // Its own lock wait timeout (2 s) is the bound: blocked, it fails with ER_LOCK_WAIT_TIMEOUT.
    await expect(withTimeout('the checkout update', checkout, 60_000)).resolves.toBe(1);
  } finally {
    await blocker.rollback();
  }
  const outcome = await withTimeout('the cancellation', cancelling, 60_000);
  expect(outcome.transitioned.map((t) => t.id)).toEqual([order]);
  expect(await db('coupons').where({ id: coupon }).first('status', 'locked_order_id')).toEqual({ status: 'ACTIVE', locked_order_id: null });
});

test("a coupon expiry batch holding a LOCKED coupon's stale entry does not block its order's cancellation", async () => {
  const active = await insert('coupons', { user_id: 1, status: 'ACTIVE', expire_time: db.raw('NOW(3) - INTERVAL 1 SECOND') });
  const locked = await insert('coupons', { user_id: 1, status: 'LOCKED', expire_time: db.raw('NOW(3) - INTERVAL 1 SECOND') });
  const order = await insert('orders', { user_id: 1, status: 'UNPAID', coupon_id: locked, expire_time: db.raw('NOW(3) - INTERVAL 1 SECOND') });
  await db('coupons').where({ id: locked }).update({ locked_order_id: order });

  // The expiry batch carries an entry for the LOCKED coupon too (written while it was ACTIVE).
  const activeDue = await expireAtMs('coupons', active);
  const blocker = await blockOutboxKeys(eventKeyPrefix(couponExpired, active, activeDue));
  const expiring = batches.run(
    couponExpired,
    [
      { id: active, expireAtMs: activeDue },
      { id: locked, expireAtMs: await expireAtMs('coupons', locked) },
    ],
    'stream',
  );
  try {
    await expiryWaitingAtOutbox();
    const paused = new Set(lockWaits().keys());
    const cancelled = await completesUnblocked(
      'the cancellation while the coupon expiry is in flight',
      batches.run(orderCancelled, [{ id: order, expireAtMs: await expireAtMs('orders', order) }], 'stream'),
      paused,
    );
    expect(cancelled.transitioned.map((t) => t.id)).toEqual([order]);
  } finally {
    await blocker.rollback();
  }
  const expired = await withTimeout('the coupon expiry', expiring, 60_000);
  expect(expired.transitioned.map((t) => t.id)).toEqual([active]);
  expect(expired.stale.map((e) => e.id)).toEqual([locked]);
  // Released by the cancellation, not expired by the batch that saw it LOCKED.
  expect(await db('coupons').where({ id: locked }).first('status')).toEqual({ status: 'ACTIVE' });
});
