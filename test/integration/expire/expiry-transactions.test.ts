/**
 * The expirer's transactions against the real database: guarded by the database clock,
 * idempotent on replay, strict about the state machines, one outbox row per event_key.
 *
 * In a database of this file's own, emptied before each test: every count is exact.
 */
import type { Db } from '../../../src/db/knex';
import { couponExpiredKey, CouponExpired } from '../../../src/core/events';
import { expireCouponBatch } from '../../../src/expire/expire-coupon-batch';
import { cancelOrderBatch } from '../../../src/expire/cancel-order-batch';
import { insertOutbox, OutboxInsert } from '../../../src/expire/sql/insert-outbox';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase('expiry_tx');
  db = testDb.db;
});

afterAll(async () => {
  await testDb?.drop();
});

beforeEach(async () => {
  await db.raw('DELETE FROM outbox');
  await db.raw('DELETE FROM orders');
  await db.raw('DELETE FROM coupons');
});

/** Inserts a row whose expire_time is `offsetMs` from the database's NOW(3); returns id and expire time. */
async function insertRow(table: 'coupons' | 'orders', values: Record<string, unknown>, offsetMs: number): Promise<{ id: string; expireAtMs: number }> {
  const [id] = await db(table).insert({ user_id: 9, ...values, expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [offsetMs * 1000]) });
  const row = (await db(table).where({ id }).first()) as { expire_time: Date };
  return { id: String(id), expireAtMs: row.expire_time.getTime() };
}

/** Every row of this database's outbox, oldest first. */
async function outboxRows(): Promise<Array<{ event_key: string; payload: string }>> {
  return db('outbox').orderBy('id').select('event_key', 'payload');
}

test('a due coupon expires once; replaying the batch changes nothing', async () => {
  const coupon = await insertRow('coupons', { status: 'ACTIVE' }, -1_000);

  const first = await expireCouponBatch(db, [coupon], 'stream');
  expect(first.transitioned).toEqual([{ id: coupon.id, dueAtMs: coupon.expireAtMs }]);
  const row = (await db('coupons').where({ id: coupon.id }).first()) as { status: string; expired_at: Date; version: number };
  expect(row.status).toBe('EXPIRED');
  expect(row.version).toBe(1);
  expect(row.expired_at.getTime()).toBeGreaterThanOrEqual(coupon.expireAtMs);

  const key = `coupon-expired-${coupon.id}-${coupon.expireAtMs}`;
  const events = await outboxRows();
  expect(events.map((e) => e.event_key)).toEqual([key]);
  expect(JSON.parse(events[0]!.payload)).toMatchObject({
    event_type: 'COUPON_EXPIRED',
    coupon_id: coupon.id,
    due_at: coupon.expireAtMs,
    occurred_at: row.expired_at.getTime(),
    path: 'stream',
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
  });

  const replay = await expireCouponBatch(db, [coupon], 'replay');
  expect(replay.transitioned).toEqual([]);
  expect(replay.stale).toEqual([coupon]);
  await expect(outboxRows()).resolves.toEqual(events);
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'EXPIRED', version: 1 });
});

test('a coupon not yet due by the database clock is rescheduled, not expired', async () => {
  const coupon = await insertRow('coupons', { status: 'ACTIVE' }, 60_000);
  const outcome = await expireCouponBatch(db, [coupon], 'stream');
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

  const outcome = await expireCouponBatch(db, [oldEntry, used, locked], 'stream');
  expect(outcome.transitioned).toEqual([]);
  expect(outcome.notYetDue).toEqual([]);
  expect(outcome.stale).toEqual([oldEntry, used, locked]);
  const statuses = await db('coupons').whereIn('id', [pushed.id, used.id, locked.id]).orderBy('id').pluck('status');
  expect(statuses).toEqual(['ACTIVE', 'USED', 'LOCKED']);
  await expect(outboxRows()).resolves.toEqual([]);
});

test('a due unpaid order is cancelled and releases its locked coupon in the same transaction', async () => {
  const order = await insertRow('orders', { status: 'UNPAID' }, -500);
  const coupon = await insertRow('coupons', { status: 'LOCKED', locked_order_id: order.id }, 3_600_000);
  await db('orders').where({ id: order.id }).update({ coupon_id: coupon.id });
  const paid = await insertRow('orders', { status: 'PAID' }, -500);

  const outcome = await cancelOrderBatch(db, [order, paid], 'stream');
  expect(outcome.transitioned).toEqual([{ id: order.id, dueAtMs: order.expireAtMs }]);
  expect(outcome.stale).toEqual([paid]);

  await expect(db('orders').where({ id: order.id }).first()).resolves.toMatchObject({ status: 'CANCELLED', cancel_reason: 'TIMEOUT', version: 1 });
  await expect(db('orders').where({ id: paid.id }).first()).resolves.toMatchObject({ status: 'PAID' });
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'ACTIVE', locked_order_id: null, version: 1 });

  const events = await outboxRows();
  expect(events.map((e) => e.event_key)).toEqual([`order-cancelled-${order.id}-${order.expireAtMs}`]);
  expect(JSON.parse(events[0]!.payload)).toMatchObject({
    event_type: 'ORDER_CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: coupon.id,
    coupon_released: true,
  });

  const replay = await cancelOrderBatch(db, [order], 'replay');
  expect(replay.transitioned).toEqual([]);
  await expect(outboxRows()).resolves.toEqual(events);
});

test('the same outbox event inserted twice through insertOutbox leaves one row: the first', async () => {
  // The guarded UPDATE never lets a replayed batch get this far; this leans on the unique
  // event_key alone (uq_outbox_event_key, invariant I4).
  const event: CouponExpired = {
    event_key: couponExpiredKey('42', 1_700_000_000_123),
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
    await db.transaction((trx) => insertOutbox(trx, [row])),
    await db.transaction((trx) => insertOutbox(trx, [row])),
    await db.transaction((trx) => insertOutbox(trx, [replayed, row])),
  ];
  expect(inserted).toEqual([1, 0, 0]);
  const rows = await outboxRows();
  expect(rows.map((r) => r.event_key)).toEqual([event.event_key]);
  expect(JSON.parse(rows[0]!.payload)).toEqual(event);
});
