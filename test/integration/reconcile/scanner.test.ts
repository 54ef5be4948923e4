/**
 * The compensation scanner against the real database (and Kafka for the events), in a database
 * of this file's own, with the stream roles not running: what it finds, it transitions exactly
 * once through the expirer's own transactions (path = scanner); several instances split a pass
 * without repeating rows; its page read walks the index range in order.
 *
 * @mysql
 * @lane isolated
 */
import type { Knex } from 'knex';
import { startTimebucket, Running } from '../../../src/main';
import { createMetrics, Metrics } from '../../../src/ops/metrics';
import { scanPageSql } from '../../../src/reconcile/sql/claim-scan-page';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { logger, uniqueName } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { registerOutboxConnector, type TestOutboxConnector } from '../../support/test-connector';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { collectEvents } from '../../support/events';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { countInStatus, metricSum } from '../../support/counts';
import { explainJson, FILESORT, firstTableOf } from '../../support/explain';

let testDb: TestDatabase;
let db: Knex;
let pipeline: TestPipeline;
const running: Running[] = [];

let outboxConnector: TestOutboxConnector | undefined;

beforeAll(async () => {
  testDb = await createTestDatabase('scanner');
  db = testDb.db;
  outboxConnector = await registerOutboxConnector(testDb.name);
  pipeline = await createTestPipeline({
    env: {
      TB_DB_NAME: testDb.name,
      TB_SCANNER_GRACE_MS: '1000',
      TB_SCANNER_INTERVAL_MS: '200',
      TB_SCANNER_PAGE_SIZE: '20',
      TB_SCANNER_MAX_PAGES_PER_SECOND: '200',
    },
  });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await pipeline.stopAll();
});

afterAll(async () => {
  await outboxConnector?.remove();
  await testDb?.drop();
});

beforeEach(async () => {
  for (const table of ['event_outbox', 'orders', 'coupons', 'scanner_cursors']) await db.raw(`DELETE FROM ${table}`);
});

const overdue = (ms: number) => db.raw('NOW(3) - INTERVAL ? MICROSECOND', [ms * 1000]);
const count = (table: 'coupons' | 'orders', status: string) => countInStatus(db, table, status);
const caughtOf = (metrics: Metrics, entity: string) => metricSum(metrics.scannerCaught, { entity });

test('with the stream down, the scanner alone transitions every overdue coupon and order once, with path = scanner', async () => {
  await db('coupons').insert(Array.from({ length: 100 }, () => ({ user_id: 1, status: 'ACTIVE', expire_time: overdue(5_000) })));
  // Orders holding coupons: cancelling releases the coupon, which is overdue too: caught next pass.
  const held: number[] = [];
  const orders: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const [coupon] = await db('coupons').insert({ user_id: 2, status: 'LOCKED', expire_time: overdue(5_000) });
    const [order] = await db('orders').insert({ user_id: 2, status: 'UNPAID', coupon_id: coupon, expire_time: overdue(4_000) });
    await db('coupons').where({ id: coupon }).update({ locked_order_id: order });
    held.push(coupon!);
    orders.push(order!);
  }
  await db('orders').insert(Array.from({ length: 20 }, () => ({ user_id: 3, status: 'UNPAID', expire_time: overdue(3_000) })));
  // Not the scanner's: not overdue by the grace period, not in an expirable state.
  await db('coupons').insert([
    { user_id: 4, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 1 HOUR') },
    { user_id: 4, status: 'USED', expire_time: overdue(5_000) },
  ]);
  await db('orders').insert({ user_id: 4, status: 'PAID', expire_time: overdue(5_000) });

  const events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  try {
    await pipeline.start(['scanner', 'outbox-keeper']);
    await waitFor(
      'every overdue row transitioned',
      async () => ((await count('coupons', 'EXPIRED')) === 110 && (await count('orders', 'CANCELLED')) === 30 ? true : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 200,
      },
    );
    await waitFor('every event published', () => (events.events.length >= 140 ? true : undefined), { timeoutMs: 30_000, intervalMs: 200 });
    expect(events.events).toHaveLength(140);
    expect(new Set(events.events.map((e) => e.headers['event_key'])).size).toBe(140);
    expect(events.events.every((e) => e.value['path'] === 'scanner')).toBe(true);
  } finally {
    await events.stop();
  }
  expect(await count('coupons', 'ACTIVE')).toBe(1);
  expect(await count('coupons', 'USED')).toBe(1);
  expect(await count('orders', 'PAID')).toBe(1);
  const releasedThenExpired = (await db('coupons').whereIn('id', held).select('status', 'version', 'locked_order_id')) as Array<{
    status: string;
    version: number;
    locked_order_id: number | null;
  }>;
  expect(releasedThenExpired.every((c) => c.status === 'EXPIRED' && c.version === 2 && c.locked_order_id === null)).toBe(true);
  expect(await caughtOf(pipeline.metrics, 'coupon')).toBe(110);
  expect(await caughtOf(pipeline.metrics, 'order')).toBe(30);
});

test('two scanner instances split the work: every row once, both of them catching', async () => {
  await db('coupons').insert(Array.from({ length: 1_000 }, () => ({ user_id: 5, status: 'ACTIVE', expire_time: overdue(5_000) })));
  const metrics = [createMetrics({ entities: ['coupon', 'order'] }), createMetrics({ entities: ['coupon', 'order'] })];
  for (const m of metrics) {
    running.push(
      await startTimebucket(pipeline.config, pipeline.topology, {
        roles: ['scanner'],
        logger,
        metrics: m,
        instanceId: uniqueName('scan'),
        catalogue: pipeline.catalogue,
      }),
    );
  }
  await waitFor('every coupon expired', async () => ((await count('coupons', 'EXPIRED')) === 1_000 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200 });
  expect(await outboxCount(db, pipeline.catalogue)).toEqual({ rows: 1_000, keys: 1_000 });
  const caught = await Promise.all(metrics.map((m) => caughtOf(m, 'coupon')));
  expect(caught[0]! + caught[1]!).toBe(1_000);
  expect(caught[0]).toBeGreaterThan(0);
  expect(caught[1]).toBeGreaterThan(0);
});

test.each([
  ['coupon', 'coupons', 'ACTIVE'],
  ['order', 'orders', 'UNPAID'],
] as const)('the %s page read is an index range in index order: no full scan, no filesort', async (entity, table, status) => {
  // Enough rows of several states for the optimizer to have a choice.
  const statuses = table === 'coupons' ? ['ACTIVE', 'EXPIRED', 'USED', 'LOCKED'] : ['UNPAID', 'PAID', 'CANCELLED'];
  await db(table).insert(
    Array.from({ length: 2_000 }, (_, i) => ({ user_id: 6, status: statuses[i % statuses.length], expire_time: overdue(1_000 + i * 10) })),
  );
  await db.raw(`ANALYZE TABLE ${table}`);
  const cursor = scanCursorsOf(pipeline.catalogue).find((c) => c.key === entity)!;
  const plan = await explainJson(db, scanPageSql(cursor), [status, new Date(), new Date(0), new Date(0), '0', 20]);
  expect(firstTableOf(plan)).toMatchObject({ access_type: 'range', key: `idx_${table}_status_expire_id`, used_key_parts: ['status', 'expire_time', 'id'] });
  expect(plan).not.toMatch(FILESORT);
});
