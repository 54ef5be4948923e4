/**
 * The expirer's transactions against the real database: guarded by the database clock,
 * idempotent on replay, strict about the state machines.
 */
import { createDb, Db } from '../../../src/db/knex';
import { expireCouponBatch } from '../../../src/expire/expire-coupon-batch';
import { cancelOrderBatch } from '../../../src/expire/cancel-order-batch';
import { config } from '../../support/stack';

let db: Db;

beforeAll(() => {
  db = createDb(config.db);
});

afterAll(async () => {
  await db.destroy();
});

/** Inserts a row whose expire_time is `offsetMs` from the database's NOW(3); returns id and expire time. */
async function insertRow(table: 'coupons' | 'orders', values: Record<string, unknown>, offsetMs: number): Promise<{ id: string; expireAtMs: number }> {
  const [id] = await db(table).insert({ user_id: 9, ...values, expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [offsetMs * 1000]) });
  const row = (await db(table).where({ id }).first()) as { expire_time: Date };
  return { id: String(id), expireAtMs: row.expire_time.getTime() };
}

async function outboxRows(key: string): Promise<Array<{ event_key: string; payload: string }>> {
  return db('outbox').where({ event_key: key }).select('event_key', 'payload');
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
  const events = await outboxRows(key);
  expect(events).toHaveLength(1);
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
  await expect(outboxRows(key)).resolves.toHaveLength(1);
});

test('a coupon not yet due by the database clock is rescheduled, not expired', async () => {
  const coupon = await insertRow('coupons', { status: 'ACTIVE' }, 60_000);
  const outcome = await expireCouponBatch(db, [coupon], 'stream');
  expect(outcome.transitioned).toEqual([]);
  expect(outcome.notYetDue).toHaveLength(1);
  expect(outcome.notYetDue[0]!.entry).toEqual(coupon);
  expect(outcome.notYetDue[0]!.retryInMs).toBeGreaterThan(50_000);
  expect(outcome.notYetDue[0]!.retryInMs).toBeLessThanOrEqual(60_000);
  await expect(db('coupons').where({ id: coupon.id }).first()).resolves.toMatchObject({ status: 'ACTIVE', expired_at: null });
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

  const events = await outboxRows(`order-cancelled-${order.id}-${order.expireAtMs}`);
  expect(events).toHaveLength(1);
  expect(JSON.parse(events[0]!.payload)).toMatchObject({
    event_type: 'ORDER_CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: coupon.id,
    coupon_released: true,
  });

  const replay = await cancelOrderBatch(db, [order], 'replay');
  expect(replay.transitioned).toEqual([]);
  await expect(outboxRows(`order-cancelled-${order.id}-${order.expireAtMs}`)).resolves.toHaveLength(1);
});
