/**
 * Ids beyond 2^53 (snowflake-style: 2^53 + 1, 2^63 - 1) through the expiry transactions,
 * exact: the right rows transition, their neighbours do not, and the event_outbox payloads carry
 * the ids exact (Avro longs, read back as decimal strings). Rows are written by raw SQL with the ids as SQL literals, so
 * no JS number ever holds them.
 *
 * In a database of this file's own: an explicit id moves the table's AUTO_INCREMENT past it,
 * and every later insert into a shared table would get an id beyond 2^53.
 *
 * @mysql
 * @lane isolated
 */
import { join } from 'node:path';
import type { Db } from '../../../src/db/knex';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { loadEntities } from '../../../src/ops/load-entities';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { eventWriter } from '../../support/event-writer';
import { outboxEvents } from '../../support/outbox-rows';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let testDb: TestDatabase;
let db: Db;
let batches: ReturnType<typeof createTransitionBatches>;
const catalogue = loadEntities(join(__dirname, '../../../entities/default.json'));
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');

const ABOVE_2_53 = '9007199254740993'; // 2^53 + 1: the first integer a double cannot hold
const MAX_SIGNED = '9223372036854775807'; // 2^63 - 1: the largest Avro long
const TWO_53 = '9007199254740992'; // what Number() makes of 2^53 + 1

beforeAll(async () => {
  testDb = await createTestDatabase('expire_big_ids');
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

/** The row's expire_time in ms and its BIGINT columns as text, read without any JS number. */
async function row(table: 'coupons' | 'orders', id: string): Promise<Record<string, string | number | null>> {
  const [rows] = (await db.raw(
    table === 'coupons'
      ? 'SELECT CAST(id AS CHAR) AS id, CAST(user_id AS CHAR) AS user_id, status, CAST(locked_order_id AS CHAR) AS locked_order_id, version, expire_time FROM coupons WHERE id = ?'
      : 'SELECT CAST(id AS CHAR) AS id, CAST(user_id AS CHAR) AS user_id, status, CAST(coupon_id AS CHAR) AS coupon_id, version, expire_time FROM orders WHERE id = ?',
    [id],
  )) as [Array<Record<string, string | number | null> & { expire_time: Date }>];
  const r = rows[0]!;
  return { ...r, expire_time: r.expire_time.getTime() };
}

async function outbox(): Promise<Array<{ event_key: string; entity_id: string; payload: Record<string, unknown> }>> {
  // entity_id is the key's text, and the payloads' longs are decoded exact (bigint, then its
  // decimal string): a rounded id would show.
  return (await outboxEvents(db, catalogue)).map((e) => ({ event_key: e.eventKey, entity_id: e.entityId, payload: e.payload }));
}

test('coupons 2^53 + 1 and 2^63 - 1 expire exactly; their neighbour 2^53 is not touched', async () => {
  await db.raw(
    `INSERT INTO coupons (id, user_id, status, expire_time) VALUES
       (${ABOVE_2_53}, ${MAX_SIGNED}, 'ACTIVE', NOW(3) - INTERVAL 2 SECOND),
       (${MAX_SIGNED}, ${ABOVE_2_53}, 'ACTIVE', NOW(3) - INTERVAL 1 SECOND),
       (${TWO_53}, ${TWO_53}, 'ACTIVE', NOW(3) - INTERVAL 1 SECOND)`,
  );
  const entries = [ABOVE_2_53, MAX_SIGNED].map(async (id) => ({ id, expireAtMs: (await row('coupons', id))['expire_time'] as number }));
  const [low, high] = await Promise.all(entries);

  const outcome = await batches.run(couponExpired, [low!, high!], 'stream');
  expect(outcome.transitioned).toEqual([
    { id: ABOVE_2_53, dueAtMs: low!.expireAtMs },
    { id: MAX_SIGNED, dueAtMs: high!.expireAtMs },
  ]);
  await expect(row('coupons', ABOVE_2_53)).resolves.toMatchObject({ status: 'EXPIRED', version: 1 });
  await expect(row('coupons', MAX_SIGNED)).resolves.toMatchObject({ status: 'EXPIRED', version: 1 });
  await expect(row('coupons', TWO_53)).resolves.toMatchObject({ status: 'ACTIVE', version: 0 });

  const events = await outbox();
  expect(events.map((e) => [e.event_key, e.entity_id])).toEqual([
    [`coupon-expired-${ABOVE_2_53}-${low!.expireAtMs}-${outcome.dbNowMs}`, ABOVE_2_53],
    [`coupon-expired-${MAX_SIGNED}-${high!.expireAtMs}-${outcome.dbNowMs}`, MAX_SIGNED],
  ]);
  expect(events.map((e) => [e.payload['coupon_id'], e.payload['user_id']])).toEqual([
    [ABOVE_2_53, MAX_SIGNED],
    [MAX_SIGNED, ABOVE_2_53],
  ]);

  // Replaying the batch changes nothing: the same exact ids are stale now.
  const replay = await batches.run(couponExpired, [low!, high!], 'replay');
  expect(replay.stale).toEqual([low, high]);
  await expect(outbox()).resolves.toHaveLength(2);
});

test('orders 2^63 - 1 (holding coupon 2^53 + 1) and 2^53 + 1 are cancelled exactly, the coupon released', async () => {
  await db.raw(
    `INSERT INTO orders (id, user_id, status, coupon_id, expire_time) VALUES
       (${MAX_SIGNED}, ${ABOVE_2_53}, 'UNPAID', ${ABOVE_2_53}, NOW(3) - INTERVAL 1 SECOND),
       (${ABOVE_2_53}, ${MAX_SIGNED}, 'UNPAID', NULL, NOW(3) - INTERVAL 1 SECOND),
       (${TWO_53}, ${TWO_53}, 'UNPAID', NULL, NOW(3) - INTERVAL 1 SECOND)`,
  );
  // The held coupon, and a LOCKED neighbour held by order 2^53, which is not cancelled.
  await db.raw(
    `INSERT INTO coupons (id, user_id, status, locked_order_id, expire_time) VALUES
       (${ABOVE_2_53}, ${ABOVE_2_53}, 'LOCKED', ${MAX_SIGNED}, NOW(3) + INTERVAL 1 HOUR),
       (${TWO_53}, ${TWO_53}, 'LOCKED', ${TWO_53}, NOW(3) + INTERVAL 1 HOUR)`,
  );
  const [held, plain] = await Promise.all([MAX_SIGNED, ABOVE_2_53].map(async (id) => ({ id, expireAtMs: (await row('orders', id))['expire_time'] as number })));

  const outcome = await batches.run(orderCancelled, [held!, plain!], 'stream');
  expect(outcome.transitioned.map((t) => t.id).sort()).toEqual([ABOVE_2_53, MAX_SIGNED]);
  await expect(row('orders', MAX_SIGNED)).resolves.toMatchObject({ status: 'CANCELLED', coupon_id: ABOVE_2_53 });
  await expect(row('orders', ABOVE_2_53)).resolves.toMatchObject({ status: 'CANCELLED' });
  await expect(row('orders', TWO_53)).resolves.toMatchObject({ status: 'UNPAID' });
  await expect(row('coupons', ABOVE_2_53)).resolves.toMatchObject({ status: 'ACTIVE', locked_order_id: null, version: 1 });
  await expect(row('coupons', TWO_53)).resolves.toMatchObject({ status: 'LOCKED', locked_order_id: TWO_53 });

  const events = new Map((await outbox()).map((e) => [e.entity_id, e]));
  expect([...events.keys()].sort()).toEqual([ABOVE_2_53, MAX_SIGNED]);
  expect(events.get(MAX_SIGNED)).toMatchObject({
    event_key: `order-cancelled-${MAX_SIGNED}-${held!.expireAtMs}-${outcome.dbNowMs}`,
    payload: { order_id: MAX_SIGNED, user_id: ABOVE_2_53, coupon_id: ABOVE_2_53, coupon_released: true },
  });
  expect(events.get(ABOVE_2_53)).toMatchObject({
    event_key: `order-cancelled-${ABOVE_2_53}-${plain!.expireAtMs}-${outcome.dbNowMs}`,
    payload: { order_id: ABOVE_2_53, user_id: MAX_SIGNED, coupon_id: null, coupon_released: false },
  });
});
