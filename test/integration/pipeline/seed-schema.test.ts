/**
 * The whole pipeline on tables written the way the seeds write theirs: seed 003's `t_order` DDL
 * as printed there (whole-second DATETIME, `version`, `update_time`), and a coupon table in seed
 * 001's style: Chinese status strings, the expiry's due time as epoch milliseconds, and a LOCKED
 * coupon whose lock times out through a second due column (已锁定 → 待使用, clearing the lock),
 * after which the coupon expires from 待使用 as any other. Ids are snowflake-style, beyond 2^53.
 *
 * The tables and their mapping are the shipped example (examples/shop). They live in a database
 * of the test's own, captured by a Debezium connector of its own whose configuration is what `timebucket connector config` generates from the entities file
 * (the filter learns the tables' status columns and from-states). Events go out with schemas
 * derived from the columns. Same exactness as the demo tables: every due row once, none early by
 * the database clock, one outbox row and one event per transition, other rows untouched.
 *
 * @mysql
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTablesFrom } from '../../support/sql-file';
import { collectEvents, SeenEvent } from '../../support/events';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import type { TestPipeline } from '../../support/pipeline';
import type { TestDatabase } from '../../support/test-database';
import { outboxEvents } from '../../support/outbox-rows';
import { waitFor } from '../../support/wait-for';

// The shipped example: examples/shop/schema.sql and its mapping, examples/shop/entities.json.
const shop = join(__dirname, '../../../examples/shop');
const entities = JSON.parse(readFileSync(join(shop, 'entities.json'), 'utf8')) as unknown;
/** Snowflake-style: beyond 2^53, where a JS number would round them. */
const BASE = 2n ** 60n + BigInt(Math.floor(Math.random() * 1_000_000)) * 1000n;
const id = (n: number): string => String(BASE + BigInt(n));

let own: OwnDatabasePipeline;
let database: TestDatabase;
let pipeline: TestPipeline;
let events: { events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> };

type Expect = { dueOrders: string[]; paidOrders: string[]; farOrders: string[]; dueCoupons: string[]; lockedCoupons: string[]; usedCoupons: string[] };
const rows: Expect = { dueOrders: [], paidOrders: [], farOrders: [], dueCoupons: [], lockedCoupons: [], usedCoupons: [] };

beforeAll(async () => {
  own = await ownDatabasePipeline('seed-pipeline', entities, { tables: (db) => createTablesFrom(db, join(shop, 'schema.sql')) });
  ({ database, pipeline } = own);
  events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  await pipeline.start();

  const db = database.db;
  const order = (n: number, status: string, dueInS: number) => ({
    id: id(n),
    user_id: id(900),
    order_no: `NO-${n}`,
    status,
    total_amount: '199.90',
    expire_time: db.raw('NOW() + INTERVAL ? SECOND', [dueInS]),
    create_time: db.raw('NOW()'),
    update_time: db.raw('NOW()'),
  });
  for (let n = 0; n < 20; n += 1) rows.dueOrders.push(id(n));
  await db('t_order').insert(rows.dueOrders.map((_, n) => order(n, 'UNPAID', 2 + (n % 4))));
  for (let n = 20; n < 23; n += 1) rows.paidOrders.push(id(n));
  await db('t_order').insert(rows.paidOrders.map((_, k) => order(20 + k, 'PAID', 2)));
  for (let n = 23; n < 25; n += 1) rows.farOrders.push(id(n));
  await db('t_order').insert(rows.farOrders.map((_, k) => order(23 + k, 'UNPAID', 600)));

  const nowMs = 'ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000)';
  const coupon = (n: number, status: string, dueInMs: number, lockedForMs: number | null) => ({
    id: id(100 + n),
    user_id: id(900 + (n % 3)),
    coupon_template_id: 7,
    status,
    face_value: '10.00',
    expire_at_ms: db.raw(`${nowMs} + ?`, [dueInMs]),
    lock_expire_time: lockedForMs === null ? null : db.raw('NOW(3) + INTERVAL ? MICROSECOND', [lockedForMs * 1000]),
    lock_order_no: lockedForMs === null ? null : `NO-${n}`,
  });
  for (let n = 0; n < 20; n += 1) rows.dueCoupons.push(id(100 + n));
  await db('user_coupon').insert(rows.dueCoupons.map((_, n) => coupon(n, '待使用', 2_000 + (n % 4) * 700, null)));
  // Locked for an order: the lock times out after 1.5 s, then the coupon expires at 4 s.
  for (let n = 20; n < 25; n += 1) rows.lockedCoupons.push(id(100 + n));
  await db('user_coupon').insert(rows.lockedCoupons.map((_, k) => coupon(20 + k, '已锁定', 4_000, 1_500)));
  for (let n = 25; n < 28; n += 1) rows.usedCoupons.push(id(100 + n));
  await db('user_coupon').insert(rows.usedCoupons.map((_, k) => coupon(25 + k, '已使用', 2_000, null)));
});

afterAll(async () => {
  await events?.stop();
  await own?.stop();
});

test('every due row transitions once, never early by the database clock, with one outbox row and one event each', async () => {
  const db = database.db;
  const expiredCoupons = [...rows.dueCoupons, ...rows.lockedCoupons];
  await waitFor(
    'the due orders cancelled and the due coupons expired (the locked ones after their lock timed out)',
    async () => {
      const [o] = await db('t_order').whereIn('id', rows.dueOrders).where({ status: 'CANCELLED' }).count({ n: '*' });
      const [c] = await db('user_coupon').whereIn('id', expiredCoupons).where({ status: '已过期' }).count({ n: '*' });
      return Number(o!.n) === rows.dueOrders.length && Number(c!.n) === expiredCoupons.length ? true : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );

  const orders = (await db('t_order').whereIn('id', rows.dueOrders).select('id', 'expire_time', 'cancel_time', 'cancel_reason', 'version')) as Array<{
    id: string | number;
    expire_time: Date;
    cancel_time: Date;
    cancel_reason: string;
    version: number;
  }>;
  for (const o of orders) {
    expect(o.cancel_time.getTime()).toBeGreaterThanOrEqual(o.expire_time.getTime());
    expect(o).toMatchObject({ cancel_reason: 'TIMEOUT', version: 1 });
  }
  const coupons = (await db('user_coupon').whereIn('id', expiredCoupons).select('id', 'expire_at_ms', 'lock_order_no', 'lock_expire_time')) as Array<{
    id: string;
    expire_at_ms: number;
    lock_order_no: string | null;
    lock_expire_time: Date | null;
  }>;
  for (const c of coupons) expect(c).toMatchObject({ lock_order_no: null, lock_expire_time: null });

  // One outbox row per transition, each decided by the database clock at or after its due time.
  const outbox = (await outboxEvents(db, pipeline.catalogue)).map((e) => ({
    event_key: e.eventKey,
    event_type: e.eventType,
    entity_id: e.entityId,
    payload: JSON.stringify(e.payload),
  }));
  const count = (type: string) => outbox.filter((r) => r.event_type === type).length;
  expect([count('T_ORDER_CANCELLED'), count('USER_COUPON_EXPIRED'), count('USER_COUPON_UNLOCKED')]).toEqual([
    rows.dueOrders.length,
    expiredCoupons.length,
    rows.lockedCoupons.length,
  ]);
  expect(new Set(outbox.map((r) => r.event_key)).size).toBe(outbox.length);
  for (const r of outbox) {
    const p = JSON.parse(r.payload) as { due_at: number; occurred_at: number };
    expect(p.occurred_at).toBeGreaterThanOrEqual(p.due_at);
    // A transition's key ends with its database time.
    expect(r.event_key.endsWith(`-${p.occurred_at}`)).toBe(true);
  }
  const dueMs = new Map(coupons.map((c) => [String(c.id), Number(c.expire_at_ms)]));
  const rowOfKey = (key: string) => key.slice(0, key.lastIndexOf('-'));
  expect(
    outbox
      .filter((r) => r.event_type === 'USER_COUPON_EXPIRED')
      .map((r) => rowOfKey(r.event_key))
      .sort(),
  ).toEqual(expiredCoupons.map((c) => `user_coupon-expired-${c}-${dueMs.get(c)}`).sort());

  // Every event on its topic, decoded through the derived schema, ids exact.
  await waitFor('every event published', () => (new Set(events.events.map((e) => e.headers['event_key'])).size >= outbox.length ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  expect(events.undecodable).toEqual([]);
  const firstOrder = events.events.find((e) => e.headers['event_type'] === 'T_ORDER_CANCELLED' && e.key === rows.dueOrders[0])!;
  expect(firstOrder.value).toMatchObject({
    order_id: BASE,
    user_id: BASE + 900n,
    order_no: 'NO-0',
    total_amount: '199.90',
    from_status: 'UNPAID',
    to_status: 'CANCELLED',
    reason: 'TIMEOUT',
    version: 1n,
    path: 'stream',
  });
  const unlocked = events.events.filter((e) => e.headers['event_type'] === 'USER_COUPON_UNLOCKED');
  expect(unlocked.map((e) => e.key).sort()).toEqual([...rows.lockedCoupons].sort());
  expect(unlocked[0]!.value).toMatchObject({ from_status: '已锁定', to_status: '待使用' });
  const expired = events.events.find((e) => e.headers['event_type'] === 'USER_COUPON_EXPIRED')!;
  expect(expired.value).toMatchObject({ from_status: '待使用', to_status: '已过期', face_value: '10.00' });
});

test('rows in other states, and rows not yet due, are untouched', async () => {
  const db = database.db;
  const paid = (await db('t_order').whereIn('id', rows.paidOrders).select('status', 'cancel_time', 'version')) as Array<Record<string, unknown>>;
  expect(paid).toEqual(rows.paidOrders.map(() => ({ status: 'PAID', cancel_time: null, version: 0 })));
  const far = (await db('t_order').whereIn('id', rows.farOrders).select('status', 'cancel_time')) as Array<Record<string, unknown>>;
  expect(far).toEqual(rows.farOrders.map(() => ({ status: 'UNPAID', cancel_time: null })));
  const used = (await db('user_coupon').whereIn('id', rows.usedCoupons).select('status')) as Array<Record<string, unknown>>;
  expect(used).toEqual(rows.usedCoupons.map(() => ({ status: '已使用' })));
});
