/**
 * The expiry transaction on tables that are not timebucket's own, described only by an entities
 * file: seed 003's `t_order` (DATETIME without fractions, DECIMAL amounts, audit columns) and a
 * coupon table with Chinese status strings, an epoch-ms BIGINT due column and a second timed
 * transition (a lock that times out: 已锁定 → 待使用, clearing lock_order_no).
 *
 * For each transition: due rows move once with one event_outbox row each and the payload the file
 * declares (I4), encoded under the schema derived from the table's columns; rows not yet due by the database clock stay and come back notYetDue (I2); rows
 * in other states stay; running the same batches again adds nothing.
 *
 * In a database of this file's own, with tables of its own (the migrations add event_outbox).
 *
 * @mysql
 * @lane isolated
 */
import { parseEntityFile } from '../../../src/core/entity-file';
import { transitionOf } from '../../../src/core/entity-catalogue';
import type { Db } from '../../../src/db/knex';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { eventWriter } from '../../support/event-writer';
import { outboxEvents } from '../../support/outbox-rows';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

const event = (type: string, idField: string, fields: Array<{ name: string; column: string }>) => ({
  type,
  ceType: `seed.${type.toLowerCase()}`,
  avroName: `seed.events.${type}`,
  idField,
  summary: `${type} (seed-style test)`,
  fields,
});

const catalogue = parseEntityFile(
  {
    entities: [
      {
        name: 'order',
        table: 't_order',
        id: 'id',
        status: { column: 'status', type: 'string', values: ['UNPAID', 'PAID', 'CANCELLED', 'FINISHED'] },
        transitions: [
          {
            name: 'cancelled',
            from: ['UNPAID'],
            to: 'CANCELLED',
            due: { column: 'expire_time', kind: 'datetime' },
            index: 'idx_status_expire_id',
            set: { cancel_reason: { value: 'TIMEOUT' }, cancel_time: { now: 'datetime' }, version: { increment: 1 }, update_time: { now: 'datetime' } },
            event: event('SEED_ORDER_CANCELLED', 'order_id', [
              { name: 'user_id', column: 'user_id' },
              { name: 'order_no', column: 'order_no' },
              { name: 'total_amount', column: 'total_amount' },
              { name: 'reason', column: 'cancel_reason' },
              { name: 'cancel_time', column: 'cancel_time' },
              { name: 'version', column: 'version' },
            ]),
          },
        ],
      },
      {
        name: 'coupon',
        table: 't_coupon',
        id: 'id',
        status: { column: 'status', type: 'string', values: ['待使用', '已锁定', '已使用', '已过期'] },
        transitions: [
          {
            name: 'expired',
            from: ['待使用'],
            to: '已过期',
            due: { column: 'expire_at_ms', kind: 'epoch_ms' },
            index: 'idx_status_expire_at',
            set: { expired_at_ms: { now: 'epoch_ms' }, version: { increment: 1 } },
            event: event('SEED_COUPON_EXPIRED', 'coupon_id', [
              { name: 'user_id', column: 'user_id' },
              { name: 'coupon_code', column: 'coupon_code' },
              { name: 'expired_at_ms', column: 'expired_at_ms' },
              { name: 'version', column: 'version' },
            ]),
          },
          {
            name: 'lock_timeout',
            from: ['已锁定'],
            to: '待使用',
            due: { column: 'lock_expire_time', kind: 'datetime' },
            index: 'idx_status_lock_expire',
            set: { lock_order_no: { value: null }, version: { increment: 1 } },
            event: event('SEED_COUPON_LOCK_TIMED_OUT', 'coupon_id', [
              { name: 'lock_order_no', column: 'lock_order_no' },
              { name: 'version', column: 'version' },
            ]),
          },
        ],
      },
    ],
  },
  'seed-style test catalogue',
);
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const lockTimeout = transitionOf(catalogue, 'coupon', 'lock_timeout');

let testDb: TestDatabase;
let db: Db;
let batches: ReturnType<typeof createTransitionBatches>;

beforeAll(async () => {
  testDb = await createTestDatabase('seed_schema');
  db = testDb.db;
  await db.raw(`CREATE TABLE t_order (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, order_no VARCHAR(64) NOT NULL, status VARCHAR(32) NOT NULL,
    total_amount DECIMAL(18,2) NOT NULL, expire_time DATETIME NOT NULL, pay_time DATETIME NULL, cancel_time DATETIME NULL, cancel_reason VARCHAR(64) NULL,
    version INT NOT NULL DEFAULT 0, create_time DATETIME NOT NULL, update_time DATETIME NOT NULL, UNIQUE KEY uk_order_no (order_no),
    KEY idx_status_expire_id (status, expire_time, id), KEY idx_user_create_time (user_id, create_time)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  await db.raw(`CREATE TABLE t_coupon (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, coupon_code VARCHAR(64) NOT NULL, status VARCHAR(16) NOT NULL,
    expire_at_ms BIGINT NOT NULL, expired_at_ms BIGINT NULL, lock_order_no VARCHAR(64) NULL, lock_expire_time DATETIME(3) NULL, version INT NOT NULL DEFAULT 0,
    KEY idx_status_expire_at (status, expire_at_ms, id), KEY idx_status_lock_expire (status, lock_expire_time, id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  // After the tables: their columns are what the events' schemas are derived from.
  batches = createTransitionBatches(db, catalogue, { outbox: await eventWriter(db, catalogue) });
});

afterAll(async () => {
  await testDb?.drop();
});

beforeEach(async () => {
  await db.raw('DELETE FROM event_outbox');
  await db.raw('DELETE FROM t_order');
  await db.raw('DELETE FROM t_coupon');
});

type Entry = { id: string; expireAtMs: number };

/** An order whose expire_time is `offsetS` seconds from the database's NOW(); returns its entry. */
async function insertOrder(id: number, status: string, offsetS: number): Promise<Entry> {
  await db.raw(
    `INSERT INTO t_order (id, user_id, order_no, status, total_amount, expire_time, version, create_time, update_time)
     VALUES (?, 77, ?, ?, 12.50, NOW() + INTERVAL ? SECOND, 0, NOW() - INTERVAL 1 HOUR, NOW() - INTERVAL 1 HOUR)`,
    [id, `NO-${id}`, status, offsetS],
  );
  const [[row]] = (await db.raw('SELECT expire_time FROM t_order WHERE id = ?', [id])) as [[{ expire_time: Date }]];
  return { id: String(id), expireAtMs: row.expire_time.getTime() };
}

/** A coupon due (expire_at_ms) `expireInMs` from the database's clock, its lock timing out `lockInMs` from it (none if null). */
async function insertCoupon(id: number, status: string, expireInMs: number, lockInMs: number | null): Promise<{ expiry: Entry; lock: Entry | null }> {
  await db.raw(
    `INSERT INTO t_coupon (id, user_id, coupon_code, status, expire_at_ms, lock_order_no, lock_expire_time)
     VALUES (?, 88, ?, ?, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + ?, ?, IF(? IS NULL, NULL, NOW(3) + INTERVAL ? MICROSECOND))`,
    [id, `C-${id}`, status, expireInMs, lockInMs === null ? null : `NO-${id}`, lockInMs, (lockInMs ?? 0) * 1000],
  );
  const [[row]] = (await db.raw('SELECT expire_at_ms, lock_expire_time FROM t_coupon WHERE id = ?', [id])) as [
    [{ expire_at_ms: number; lock_expire_time: Date | null }],
  ];
  return {
    expiry: { id: String(id), expireAtMs: Number(row.expire_at_ms) },
    lock: row.lock_expire_time === null ? null : { id: String(id), expireAtMs: row.lock_expire_time.getTime() },
  };
}

async function outbox(): Promise<Array<{ event_key: string; event_type: string; entity_type: string; entity_id: string; payload: Record<string, unknown> }>> {
  // Decoded: integer columns are Avro longs (decimal strings here), DATETIMEs epoch milliseconds.
  return (await outboxEvents(db, catalogue)).map((e) => ({
    event_key: e.eventKey,
    event_type: e.eventType,
    entity_type: e.entityType,
    entity_id: e.entityId,
    payload: e.payload,
  }));
}

const ids = (o: BatchOutcome) => ({
  transitioned: o.transitioned.map((t) => t.id),
  notYetDue: o.notYetDue.map((n) => n.entry.id),
  stale: o.stale.map((e) => e.id),
});

test('t_order: due UNPAID orders are cancelled once with the declared payload; not yet due by the DB clock and PAID orders stay', async () => {
  const due = await insertOrder(101, 'UNPAID', -5);
  const notYet = await insertOrder(102, 'UNPAID', 3_600);
  const paid = await insertOrder(103, 'PAID', -5);

  const first = await batches.run(orderCancelled, [due, notYet, paid], 'stream');
  expect(ids(first)).toEqual({ transitioned: ['101'], notYetDue: ['102'], stale: ['103'] });
  expect(first.notYetDue[0]!.retryInMs).toBeGreaterThan(3_500_000);

  const [rows] = (await db.raw('SELECT id, status, cancel_reason, cancel_time, version, update_time FROM t_order ORDER BY id')) as [
    Array<Record<string, unknown>>,
  ];
  expect(rows.map((r) => [r['id'], r['status'], r['cancel_reason'], r['version']])).toEqual([
    [101, 'CANCELLED', 'TIMEOUT', 1],
    [102, 'UNPAID', null, 0],
    [103, 'PAID', null, 0],
  ]);
  // DATETIME keeps whole seconds of the database clock that decided (I2).
  for (const column of ['cancel_time', 'update_time']) expect(Math.abs((rows[0]![column] as Date).getTime() - first.dbNowMs)).toBeLessThan(1_000);

  const events = await outbox();
  expect(events).toEqual([
    {
      event_key: `order-cancelled-101-${due.expireAtMs}-${first.dbNowMs}`,
      event_type: 'SEED_ORDER_CANCELLED',
      entity_type: 'order',
      entity_id: '101',
      payload: {
        event_key: `order-cancelled-101-${due.expireAtMs}-${first.dbNowMs}`,
        event_type: 'SEED_ORDER_CANCELLED',
        order_id: '101',
        from_status: 'UNPAID',
        to_status: 'CANCELLED',
        due_at: due.expireAtMs,
        occurred_at: first.dbNowMs,
        path: 'stream',
        user_id: '77',
        order_no: 'NO-101',
        total_amount: '12.50',
        reason: 'TIMEOUT',
        cancel_time: first.dbNowMs,
        version: '1',
      },
    },
  ]);

  const again = await batches.run(orderCancelled, [due, notYet, paid], 'replay');
  expect(ids(again)).toEqual({ transitioned: [], notYetDue: ['102'], stale: ['101', '103'] });
  await expect(outbox()).resolves.toEqual(events);
});

test('t_coupon: 待使用 coupons past expire_at_ms (epoch ms) become 已过期; 已锁定 and 已使用 ones and those not yet due stay', async () => {
  const due = await insertCoupon(201, '待使用', -2_000, null);
  const notYet = await insertCoupon(202, '待使用', 3_600_000, null);
  const used = await insertCoupon(203, '已使用', -2_000, null);
  const locked = await insertCoupon(204, '已锁定', -2_000, 3_600_000);

  const first = await batches.run(couponExpired, [due.expiry, notYet.expiry, used.expiry, locked.expiry], 'stream');
  expect(ids(first)).toEqual({ transitioned: ['201'], notYetDue: ['202'], stale: ['203', '204'] });

  const [rows] = (await db.raw('SELECT id, status, expired_at_ms, version FROM t_coupon ORDER BY id')) as [Array<Record<string, unknown>>];
  expect(rows).toEqual([
    { id: 201, status: '已过期', expired_at_ms: first.dbNowMs, version: 1 },
    { id: 202, status: '待使用', expired_at_ms: null, version: 0 },
    { id: 203, status: '已使用', expired_at_ms: null, version: 0 },
    { id: 204, status: '已锁定', expired_at_ms: null, version: 0 },
  ]);
  const events = await outbox();
  expect(events.map((e) => [e.event_type, e.entity_type, e.entity_id])).toEqual([['SEED_COUPON_EXPIRED', 'coupon', '201']]);
  expect(events[0]!.payload).toEqual({
    event_key: `coupon-expired-201-${due.expiry.expireAtMs}-${first.dbNowMs}`,
    event_type: 'SEED_COUPON_EXPIRED',
    coupon_id: '201',
    from_status: '待使用',
    to_status: '已过期',
    due_at: due.expiry.expireAtMs,
    occurred_at: first.dbNowMs,
    path: 'stream',
    user_id: '88',
    coupon_code: 'C-201',
    expired_at_ms: String(first.dbNowMs),
    version: '1',
  });

  const again = await batches.run(couponExpired, [due.expiry, notYet.expiry, used.expiry, locked.expiry], 'replay');
  expect(ids(again)).toEqual({ transitioned: [], notYetDue: ['202'], stale: ['201', '203', '204'] });
  await expect(outbox()).resolves.toEqual(events);
});

test('t_coupon: a 已锁定 coupon whose lock_expire_time passed goes back to 待使用 with lock_order_no cleared; its own transition, its own event', async () => {
  const timedOut = await insertCoupon(301, '已锁定', 3_600_000, -1_000);
  const stillHeld = await insertCoupon(302, '已锁定', 3_600_000, 3_600_000);
  const free = await insertCoupon(303, '待使用', 3_600_000, -1_000); // a stale lock time on a free coupon: not this transition's

  const entries = [timedOut.lock!, stillHeld.lock!, free.lock!];
  const first = await batches.run(lockTimeout, entries, 'scanner');
  expect(ids(first)).toEqual({ transitioned: ['301'], notYetDue: ['302'], stale: ['303'] });

  const [rows] = (await db.raw('SELECT id, status, lock_order_no, version FROM t_coupon ORDER BY id')) as [Array<Record<string, unknown>>];
  expect(rows).toEqual([
    { id: 301, status: '待使用', lock_order_no: null, version: 1 },
    { id: 302, status: '已锁定', lock_order_no: 'NO-302', version: 0 },
    { id: 303, status: '待使用', lock_order_no: 'NO-303', version: 0 },
  ]);
  const events = await outbox();
  expect(events.map((e) => e.payload)).toEqual([
    {
      event_key: `coupon-lock_timeout-301-${timedOut.lock!.expireAtMs}-${first.dbNowMs}`,
      event_type: 'SEED_COUPON_LOCK_TIMED_OUT',
      coupon_id: '301',
      from_status: '已锁定',
      to_status: '待使用',
      due_at: timedOut.lock!.expireAtMs,
      occurred_at: first.dbNowMs,
      path: 'scanner',
      lock_order_no: null,
      version: '1',
    },
  ]);

  // Again: nothing new; and the coupon back in 待使用 is no business of its expiry yet (not due).
  expect(ids(await batches.run(lockTimeout, entries, 'replay'))).toEqual({ transitioned: [], notYetDue: ['302'], stale: ['301', '303'] });
  expect(ids(await batches.run(couponExpired, [timedOut.expiry], 'stream'))).toEqual({ transitioned: [], notYetDue: ['301'], stale: [] });
  await expect(outbox()).resolves.toEqual(events);
});
