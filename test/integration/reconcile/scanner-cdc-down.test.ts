/**
 * The scanner under the stream when CDC is down: with Kafka Connect stopped, rows that fall due
 * reach no bucket, and the compensation scanner transitions them once their grace period has
 * passed. When Connect returns, Debezium delivers the changes it missed and the stream routes
 * them late; those entries find the rows already transitioned and change nothing.
 *
 * On the CDC-captured database (shared with other files, so every count is over this test's ids).
 *
 * @lane exclusive
 */
import { createDb } from '../../../src/db/knex';
import { config as stackConfig, logger } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { collectEvents } from '../../support/events';
import { stackUp, stopConnect } from '../../support/stack-control';
import { waitFor } from '../../support/wait-for';

const db = createDb(stackConfig.db, { logger });
let pipeline: TestPipeline;
const ids = { coupon: [] as number[], order: [] as number[] };

beforeAll(async () => {
  pipeline = await createTestPipeline({
    env: { TB_SCANNER_GRACE_MS: '2000', TB_SCANNER_INTERVAL_MS: '500', TB_SCANNER_PAGE_SIZE: '100', TB_SCANNER_MAX_PAGES_PER_SECOND: '50' },
  });
});

afterAll(async () => {
  await pipeline?.stopAll();
  // Whatever happened, the next file gets a whole stack.
  stackUp();
  await db.destroy();
});

const transitioned = async (table: 'coupons' | 'orders', status: string, list: number[]) =>
  Number((await db(table).whereIn('id', list).where({ status }).count({ n: '*' }))[0]!.n);
const metricSum = async (
  metric: { get: () => Promise<{ values: Array<{ value: number; labels: Record<string, string | number> }> }> },
  labels: Record<string, string>,
) => (await metric.get()).values.filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want)).reduce((a, v) => a + v.value, 0);

test('rows due while Connect is down are caught by the scanner, and the late CDC entries change nothing', async () => {
  const events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  try {
    await pipeline.start(['repartitioner', 'expirer', 'cascader', 'outbox-keeper', 'scanner']);
    await stopConnect();
    const dueSoon = db.raw('NOW(3) + INTERVAL 1 SECOND');
    for (let i = 0; i < 40; i += 1) ids.coupon.push((await db('coupons').insert({ user_id: 7, status: 'ACTIVE', expire_time: dueSoon }))[0]!);
    for (let i = 0; i < 10; i += 1) ids.order.push((await db('orders').insert({ user_id: 7, status: 'UNPAID', expire_time: dueSoon }))[0]!);

    await waitFor(
      'the scanner to catch every row',
      async () =>
        (await transitioned('coupons', 'EXPIRED', ids.coupon)) === 40 && (await transitioned('orders', 'CANCELLED', ids.order)) === 10 ? true : undefined,
      {
        timeoutMs: 60_000,
        intervalMs: 250,
      },
    );
    expect(await metricSum(pipeline.metrics.transitions, { path: 'stream' })).toBe(0);

    // Connect back: Debezium resumes from its binlog position, and the repartitioner routes the
    // inserts it missed (now overdue: the due lane). Each is a stale entry, not a transition.
    stackUp();
    await waitFor('the late CDC entries processed', async () => ((await metricSum(pipeline.metrics.stale, {})) >= 50 ? true : undefined), {
      timeoutMs: 90_000,
      intervalMs: 250,
    });
    expect(await metricSum(pipeline.metrics.transitions, { path: 'stream' })).toBe(0);

    const coupons = await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids: ids.coupon });
    const orders = await outboxCount(db, pipeline.catalogue, { entity: 'order', ids: ids.order });
    expect({ rows: coupons.rows + orders.rows, keys: coupons.keys + orders.keys }).toEqual({ rows: 50, keys: 50 });

    const ours = (e: { value: Record<string, unknown> }) =>
      (e.value['event_type'] === 'COUPON_EXPIRED' && ids.coupon.includes(Number(e.value['coupon_id']))) ||
      (e.value['event_type'] === 'ORDER_CANCELLED' && ids.order.includes(Number(e.value['order_id'])));
    await waitFor('every catch published', () => (events.events.filter(ours).length >= 50 ? true : undefined), { timeoutMs: 30_000, intervalMs: 250 });
    const published = events.events.filter(ours);
    expect(published).toHaveLength(50);
    expect(published.every((e) => e.value['path'] === 'scanner')).toBe(true);
  } finally {
    await events.stop();
  }
});
