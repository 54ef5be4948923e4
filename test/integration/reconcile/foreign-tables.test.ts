/**
 * The scanner, backfill and replay's state read on a team's own tables, described only by an
 * entities file: seed 003's `t_order` (DATETIME(0) due column, its own index names) and a coupon
 * table with Chinese status values and an epoch-ms BIGINT due column, ids past 2^53. The page
 * reads are index ranges in index order (EXPLAIN: no filesort), the scanner transitions every
 * overdue row once through the transitions' own batch transactions (path = scanner), backfill
 * reads exactly the window's rows in (due, id) order.
 *
 * A database of this file's own (no CDC, no other writer), so every count is exact.
 *
 * @lane isolated
 */
import type { Knex } from 'knex';
import { transitionOf, type EntityCatalogue } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import type { BucketEntry } from '../../../src/core/bucket-entry';
import { systemClock } from '../../../src/core/clock';
import { createMetrics } from '../../../src/ops/metrics';
import { backfill } from '../../../src/reconcile/backfill';
import { classifyEntry } from '../../../src/replay/replay-classify';
import type { OutboxWriter } from '../../../src/publish/outbox-writer';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { startScanner } from '../../../src/reconcile/start-scanner';
import { scanPageSql } from '../../../src/reconcile/sql/claim-scan-page';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { keysetShape } from '../../../src/reconcile/sql/due-keyset';
import { entryStateReader } from '../../../src/replay/sql/read-entry-states';
import { expirableReads, pageQuery } from '../../../src/reconcile/sql/read-expirable-page';
import { config, logger } from '../../support/stack';
import { eventWriter } from '../../support/event-writer';
import { outboxKeys } from '../../support/outbox-rows';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';

const T_ORDER = `CREATE TABLE t_order (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, order_no VARCHAR(64) NOT NULL, status VARCHAR(32) NOT NULL, total_amount DECIMAL(18,2) NOT NULL, expire_time DATETIME NOT NULL, pay_time DATETIME NULL, cancel_time DATETIME NULL, cancel_reason VARCHAR(64) NULL, version INT NOT NULL DEFAULT 0, create_time DATETIME NOT NULL, update_time DATETIME NOT NULL, UNIQUE KEY uk_order_no (order_no), KEY idx_status_expire_id (status, expire_time, id), KEY idx_user_create_time (user_id, create_time)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;
const T_COUPON = `CREATE TABLE t_coupon (coupon_id BIGINT PRIMARY KEY, owner_id BIGINT NOT NULL, state VARCHAR(16) NOT NULL, expire_at_ms BIGINT NOT NULL, version INT NOT NULL DEFAULT 0, KEY idx_state_expire_at (state, expire_at_ms, coupon_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;
const [UNUSED, USED, EXPIRED] = ['待使用', '已使用', '已过期'];

const catalogue: EntityCatalogue = parseEntityFile(
  {
    entities: [
      {
        name: 'order',
        table: 't_order',
        id: 'id',
        status: { column: 'status', type: 'string', values: ['UNPAID', 'PAID', 'CANCELLED'] },
        transitions: [
          {
            name: 'cancelled',
            from: ['UNPAID'],
            to: 'CANCELLED',
            due: { column: 'expire_time', kind: 'datetime' },
            index: 'idx_status_expire_id',
            set: { cancel_time: { now: 'datetime' }, cancel_reason: { value: 'TIMEOUT' }, version: { increment: 1 } },
            event: {
              type: 'T_ORDER_CANCELLED',
              ceType: 'shop.order.cancelled',
              avroName: 'shop.events.OrderCancelled',
              idField: 'order_id',
              summary: 'An unpaid t_order timed out.',
              fields: [{ name: 'user_id', column: 'user_id' }],
            },
          },
        ],
      },
      {
        name: 'coupon',
        table: 't_coupon',
        id: 'coupon_id',
        status: { column: 'state', type: 'string', values: [UNUSED, USED, EXPIRED] },
        transitions: [
          {
            name: 'expired',
            from: [UNUSED],
            to: EXPIRED,
            due: { column: 'expire_at_ms', kind: 'epoch_ms' },
            index: 'idx_state_expire_at',
            set: { version: { increment: 1 } },
            event: {
              type: 'T_COUPON_EXPIRED',
              ceType: 'shop.coupon.expired',
              avroName: 'shop.events.CouponExpired',
              idField: 'coupon_id',
              summary: 'A t_coupon passed its expire_at_ms.',
              fields: [{ name: 'owner_id', column: 'owner_id' }],
            },
          },
        ],
      },
    ],
  },
  'foreign-tables.json',
);
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const BIG = 9_007_199_254_740_993n; // past 2^53: ids must stay exact strings

let testDb: TestDatabase;
let db: Knex;
let outbox: OutboxWriter;

beforeAll(async () => {
  testDb = await createTestDatabase('foreign-tables');
  db = testDb.db;
  await db.raw(T_ORDER);
  await db.raw(T_COUPON);
  // After the tables: the events' schemas are derived from their columns.
  outbox = await eventWriter(db, catalogue);
});

afterAll(async () => {
  await testDb?.drop();
});

beforeEach(async () => {
  for (const table of ['event_outbox', 't_order', 't_coupon', 'scanner_cursors']) await db.raw(`DELETE FROM ${table}`);
});

const count = async (table: string, where: Record<string, string>) => Number((await db(table).where(where).count({ n: '*' }))[0]!['n']);
const dbNowMs = async () => ((await db.raw('SELECT NOW(3) AS t')) as [[{ t: Date }]])[0][0].t.getTime();

async function insertOrders(from: bigint, n: number, status: string, dueOffsetS: number) {
  const rows = Array.from({ length: n }, (_, i) => ({
    id: String(from + BigInt(i)),
    user_id: 42,
    order_no: `NO-${from + BigInt(i)}`,
    status,
    total_amount: '19.90',
    expire_time: db.raw('NOW() + INTERVAL ? SECOND', [dueOffsetS - (i % 3)]),
    create_time: db.raw('NOW()'),
    update_time: db.raw('NOW()'),
  }));
  await db('t_order').insert(rows);
}

async function insertCoupons(from: bigint, n: number, state: string, dueAtMs: (i: number) => number) {
  await db('t_coupon').insert(Array.from({ length: n }, (_, i) => ({ coupon_id: String(from + BigInt(i)), owner_id: 7, state, expire_at_ms: dueAtMs(i) })));
}

test.each([
  ['order', 't_order', 'UNPAID', 'idx_status_expire_id', ['status', 'expire_time', 'id']],
  ['coupon', 't_coupon', UNUSED, 'idx_state_expire_at', ['state', 'expire_at_ms', 'coupon_id']],
] as const)('the %s page reads (scanner and backfill) are index ranges in index order: no full scan, no filesort', async (key, table, from, index, parts) => {
  const now = await dbNowMs();
  if (table === 't_order')
    for (const [k, status] of ['UNPAID', 'PAID', 'CANCELLED'].entries()) await insertOrders(BIG + BigInt(k * 1_000), 700, status, -60 - k);
  else for (const [k, state] of [UNUSED, USED, EXPIRED].entries()) await insertCoupons(BIG + BigInt(k * 1_000), 700, state, (i) => now - 60_000 - i * 10);
  await db.raw(`ANALYZE TABLE ${table}`);
  const cursor = scanCursorsOf(catalogue).find((c) => c.key === key)!;
  const due = (ms: number) => (table === 't_order' ? new Date(ms) : ms);
  const shape = keysetShape(cursor.entity, cursor.transition, cursor.location);
  const backfillPage = pageQuery(shape, from, { since: new Date(0), until: new Date(now) }, { expireAtMs: 0, id: '0' }, 20);
  for (const [sql, bindings] of [
    [scanPageSql(cursor), [from, due(now), due(0), due(0), '0', 20]],
    [backfillPage.sql, backfillPage.bindings],
  ] as const) {
    const [[row]] = (await db.raw(`EXPLAIN FORMAT=JSON ${sql}`, [...bindings])) as [[{ EXPLAIN: string }]];
    // MariaDB nests the table under nested_loop; MySQL puts it at query_block.table.
    const plan = JSON.parse(row.EXPLAIN) as { query_block: { table?: unknown; nested_loop?: Array<{ table: unknown }> } };
    const access = plan.query_block.table ?? plan.query_block.nested_loop?.[0]?.table;
    expect(access).toMatchObject({ access_type: 'range', key: index, used_key_parts: parts });
    expect(row.EXPLAIN).not.toMatch(/filesort/);
  }
});

test('the scanner transitions every overdue row of both tables once (path = scanner), and nothing else', async () => {
  const now = await dbNowMs();
  await insertOrders(BIG, 23, 'UNPAID', -10); // overdue by 8-10 s (DATETIME(0): whole seconds)
  await insertOrders(BIG + 100n, 3, 'UNPAID', 3_600); // not yet due
  await insertOrders(BIG + 200n, 2, 'PAID', -10); // not in the from-state
  await insertCoupons(BIG, 31, UNUSED, (i) => now - 5_000 - (i % 4)); // ties on the due time: the cursor goes by id
  await insertCoupons(BIG + 100n, 2, UNUSED, () => now + 3_600_000);
  await insertCoupons(BIG + 200n, 2, USED, () => now - 5_000);

  const metrics = createMetrics({ entities: ['order', 'coupon'] });
  const scanner = await startScanner({
    // One pass only (the next would wait a minute): every row must be caught by it, page after
    // page of 7 through the keyset cursors (the epoch-ms one stored in DATETIME(3)), ties included.
    config: { ...config, scanner: { graceMs: 1_000, intervalMs: 60_000, pageSize: 7, maxPagesPerSecond: 200 } },
    db,
    dbs: { main: db },
    catalogue,
    batches: createTransitionBatches(db, catalogue, { outbox }),
    clock: systemClock,
    logger,
    metrics,
  });
  try {
    await waitFor(
      'every overdue row transitioned',
      async () => {
        return (await count('t_order', { status: 'CANCELLED' })) === 23 && (await count('t_coupon', { state: EXPIRED })) === 31 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await waitFor('a pass completed per entity', async () => ((await metrics.scannerLastPass.get()).values.length === 2 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
  } finally {
    await scanner.stop();
  }
  const orders = (await db('t_order')
    .where({ status: 'CANCELLED' })
    .select(db.raw('CAST(id AS CHAR) AS id'), 'cancel_reason', 'version', 'expire_time')) as Array<{
    id: string;
    cancel_reason: string;
    version: number;
    expire_time: Date;
  }>;
  expect(orders.every((o) => o.cancel_reason === 'TIMEOUT' && o.version === 1)).toBe(true);
  expect(await count('t_order', { status: 'UNPAID' })).toBe(3);
  expect(await count('t_order', { status: 'PAID' })).toBe(2);
  expect(await count('t_coupon', { state: UNUSED })).toBe(2);
  expect(await count('t_coupon', { state: USED })).toBe(2);

  const keys = await outboxKeys(db, catalogue);
  expect(keys).toHaveLength(54);
  expect(new Set(keys).size).toBe(54);
  const first = orders.find((o) => o.id === String(BIG))!;
  // Keys: the row, its due time, then the transition's database time.
  const rowOfKey = (key: string) => key.slice(0, key.lastIndexOf('-'));
  expect(keys.map(rowOfKey)).toContain(`order-cancelled-${BIG}-${first.expire_time.getTime()}`);
  expect(keys.filter((k) => k.startsWith('coupon-expired-')).map(rowOfKey)).toContain(`coupon-expired-${BIG}-${now - 5_000}`);
  // One cursor row per entity, keyed by the entity (its first transition), the pass closed.
  const cursors = (await db('scanner_cursors').select('entity', 'pass_until').orderBy('entity')) as Array<{ entity: string; pass_until: Date | null }>;
  expect(cursors).toEqual([
    { entity: 'coupon', pass_until: null },
    { entity: 'order', pass_until: null },
  ]);
  const caught = Object.fromEntries((await metrics.scannerCaught.get()).values.map((v) => [String(v.labels['entity']), v.value]));
  expect(caught).toEqual({ order: 23, coupon: 31 });
  // Each row read once: no page repeated a row, none was skipped (one pass caught them all).
  const scanned = Object.fromEntries((await metrics.scannerScanned.get()).values.map((v) => [String(v.labels['entity']), v.value]));
  expect(scanned).toEqual({ order: 23, coupon: 31 });

  // Replay's state read on the same rows: done for this due time (cancel_reason holds), or not.
  await db('t_order')
    .where({ id: String(BIG + 1n) })
    .update({ cancel_reason: 'USER' });
  const states = await entryStateReader(
    db,
    catalogue.entities[0]!,
    orderCancelled,
    catalogue.entities[0]!.locations[0]!,
  )([String(BIG), String(BIG + 1n), String(BIG + 100n)]);
  const entryOf = (id: bigint) => ({ id: String(id), expireAtMs: states.rows.get(String(id))!.expireAtMs! });
  expect(states.rows.get(String(BIG))).toMatchObject({ status: 'CANCELLED', holds: { cancel_reason: true } });
  expect(classifyEntry(orderCancelled, entryOf(BIG), states.rows.get(String(BIG)), states.dbNowMs)).toBe('done');
  expect(classifyEntry(orderCancelled, entryOf(BIG + 1n), states.rows.get(String(BIG + 1n)), states.dbNowMs)).toBe('stale');
  expect(classifyEntry(orderCancelled, entryOf(BIG + 100n), states.rows.get(String(BIG + 100n)), states.dbNowMs)).toBe('notDue');
});

test('backfill reads exactly the window of each transition, in (due, id) order, ids exact, epoch-ms bounds in ms', async () => {
  const base = 1_900_000_000_000;
  // Two rows per due time, ids out of insertion order; one at each bound.
  await insertCoupons(BIG, 10, UNUSED, (i) => base + Math.floor(i / 2) * 1_000);
  await insertCoupons(BIG + 100n, 3, USED, (i) => base + i * 1_000);
  await insertOrders(BIG, 4, 'UNPAID', 120);
  const routed: BucketEntry[] = [];
  const window = { since: new Date(base + 1_000), until: new Date(base + 4_000) };
  const reads = new Map(
    catalogue.transitions.map((t) => {
      const e = catalogue.entities.find((x) => x.name === t.entity)!;
      return [t.ref, expirableReads(db, e, t, e.locations[0]!)];
    }),
  );
  const result = await backfill({
    catalogue,
    transitions: [couponExpired],
    window,
    pageSize: 4,
    count: (t, w) => reads.get(t.ref)!.count(w),
    readPage: (t, _location, from, w, cursor, limit) => reads.get(t.ref)!.readPage(from, w, cursor, limit),
    route: async (entries) => {
      routed.push(...entries);
      return { due: 0 };
    },
    now: () => Date.now(),
  });
  // [base + 1 s, base + 4 s): due times 1, 1, 2, 2, 3, 3 s (ids 2..7); the row at 4 s is out.
  expect(routed.map((e) => [e.id, e.expireAtMs - base])).toEqual([2, 3, 4, 5, 6, 7].map((i) => [String(BIG + BigInt(i)), Math.floor(i / 2) * 1_000]));
  expect(routed.every((e) => e.entity === 'coupon' && e.transition === 'expired')).toBe(true);
  expect(result).toMatchObject({ complete: true, transitions: [{ entity: 'coupon', transition: 'expired', total: 6, read: 6 }] });

  const orders = await reads.get(orderCancelled.ref)!.readPage('UNPAID', {}, null, 10);
  expect(orders.map((o) => o.id).sort()).toEqual([0n, 1n, 2n, 3n].map((i) => String(BIG + i)).sort());
  expect(orders.map((o) => o.expireAtMs)).toEqual([...orders.map((o) => o.expireAtMs)].sort((a, b) => a - b));
});
