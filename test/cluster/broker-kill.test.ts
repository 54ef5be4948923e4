/**
 * On a three-node cluster (replication factor 3, min.insync.replicas 2, as production runs):
 * one broker killed with kill -9 mid-flow and brought back. Leaders move, group coordinators
 * move, in-flight produce requests fail over. Nothing is lost, nothing is stuck: every coupon
 * and order transitions exactly once, never early, every event is published, and the process
 * is healthy afterwards without a restart.
 */
import type { Admin } from 'kafkajs';
import { ConfigResourceTypes } from 'kafkajs';
import { createDb, Db } from '../../src/db/knex';
import { createKafka } from '../../src/kafka/client';
import { dueTopic, ringTopic } from '../../src/core/topology';
import type { Running } from '../../src/main';
import { config as baseConfig, logger } from '../support/stack';
import { collectEvents } from '../support/events';
import { outboxKeys } from '../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../support/pipeline';
import { killKafkaNode, stackUp } from '../support/stack-control';
import { waitFor } from '../support/wait-for';

let db: Db;
let admin: Admin;
let pipeline: TestPipeline;
const marker = 6_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

beforeAll(async () => {
  db = createDb(baseConfig.db);
  admin = createKafka(baseConfig.kafka, logger, '-test-cluster').admin();
  await admin.connect();
  pipeline = await createTestPipeline();
});

afterAll(async () => {
  await pipeline.stopAll();
  await admin.disconnect();
  await db.destroy();
  stackUp(); // whatever happened, leave every node running for the next test
});

test('the topology topics are created with three replicas and min.insync.replicas 2', async () => {
  expect(baseConfig.kafka.brokers).toHaveLength(3);
  const topics = [ringTopic(pipeline.topology, pipeline.topology.tiers[0]!, 0), dueTopic(pipeline.topology)];
  const meta = await admin.fetchTopicMetadata({ topics });
  for (const t of meta.topics) for (const p of t.partitions) expect(p.replicas).toHaveLength(3);
  const configs = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['min.insync.replicas'] })),
  });
  for (const r of configs.resources) expect(r.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue).toBe('2');
});

test('a broker killed with kill -9 mid-flow and brought back: nothing lost, nothing stuck', async () => {
  const running: Running = await pipeline.start();
  const coupons = Array.from({ length: 800 }, (_, i) => ({
    user_id: marker,
    status: 'ACTIVE',
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor((2_000 + (20_000 * i) / 800) * 1000)]),
  }));
  const [firstCoupon] = await db('coupons').insert(coupons);
  const couponIds = coupons.map((_, i) => firstCoupon! + i);
  const orders = Array.from({ length: 100 }, (_, i) => ({
    user_id: marker,
    status: 'UNPAID',
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor((2_000 + (20_000 * i) / 100) * 1000)]),
  }));
  const [firstOrder] = await db('orders').insert(orders);
  const orderIds = orders.map((_, i) => firstOrder! + i);
  const count = async (table: 'coupons' | 'orders', ids: number[], status: string) =>
    Number((await db(table).whereIn('id', ids).where({ status }).count({ n: '*' }))[0]!.n);

  await waitFor('the flow to start', async () => ((await count('coupons', couponIds, 'EXPIRED')) >= 50 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  killKafkaNode(2);
  const killedAt = Date.now();
  await waitFor('10 s with a broker gone', () => (Date.now() - killedAt >= 10_000 ? true : undefined), { timeoutMs: 15_000, intervalMs: 500 });
  stackUp();

  await waitFor(
    'every coupon expired and every order cancelled',
    async () =>
      (await count('coupons', couponIds, 'EXPIRED')) === couponIds.length && (await count('orders', orderIds, 'CANCELLED')) === orderIds.length
        ? true
        : undefined,
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  const early = [
    ...((await db('coupons').whereIn('id', couponIds).whereRaw('expired_at < expire_time').select('id')) as unknown[]),
    ...((await db('orders').whereIn('id', orderIds).whereRaw('cancel_time < expire_time').select('id')) as unknown[]),
  ];
  expect(early).toEqual([]);
  const total = couponIds.length + orderIds.length;
  const keys = [
    ...(await outboxKeys(db, pipeline.catalogue, { entity: 'coupon', ids: couponIds })),
    ...(await outboxKeys(db, pipeline.catalogue, { entity: 'order', ids: orderIds })),
  ];
  expect(keys).toHaveLength(total);
  expect(new Set(keys).size).toBe(total);
  const wanted = new Set(keys);
  const events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  try {
    await waitFor(
      'every event published',
      async () => (new Set(events.events.map((e) => e.headers['event_key']).filter((k) => wanted.has(k!))).size === total ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
  } finally {
    await events.stop();
  }
  await waitFor('the pipeline to be healthy', () => (running.health().ok ? true : undefined), { timeoutMs: 30_000, intervalMs: 500 });
  // Longer than its bounded waits together, so a run that hangs fails on the wait that did,
  // named, rather than on the per-test cap.
}, 330_000);
