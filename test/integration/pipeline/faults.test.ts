/**
 * Faults the pipeline must shrug off: an expirer whose clock runs ahead of the database
 * (invariant I2: nothing transitions early, nothing is dropped) and a poison CDC record
 * (invariant I5: DLQ with the reason, the partition keeps flowing).
 */
import { Kafka } from 'kafkajs';
import { createDb, Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { offsetClock, systemClock } from '../../../src/core/clock';
import { dlqTopic } from '../../../src/core/topology';
import { config as baseConfig, logger, uniqueName } from '../../support/stack';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { waitFor } from '../../support/wait-for';

let db: Db;
let kafka: Kafka;
let pipeline: TestPipeline | undefined;
const marker = 2_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

beforeAll(() => {
  db = createDb(baseConfig.db);
  kafka = createKafka(baseConfig.kafka, logger, '-test-faults');
});

afterEach(async () => {
  await pipeline?.stopAll();
  pipeline = undefined;
});

afterAll(async () => {
  await db.destroy();
});

async function insertCoupons(count: number, fromMs: number, spreadMs: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const offsetUs = Math.floor((fromMs + (spreadMs * i) / count) * 1000);
    const [id] = await db('coupons').insert({ user_id: marker, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [offsetUs]) });
    ids.push(id!);
  }
  return ids;
}

async function allExpired(ids: number[]): Promise<true | undefined> {
  const [row] = await db('coupons').whereIn('id', ids).where({ status: 'EXPIRED' }).count({ n: '*' });
  return Number(row!.n) === ids.length ? true : undefined;
}

test('an expirer whose clock runs 3 s ahead of the database never expires early and drops nothing', async () => {
  pipeline = await createTestPipeline();
  await pipeline.start(['repartitioner', 'cascader', 'relay']);
  await pipeline.start(['expirer'], offsetClock(systemClock, 3_000));

  const ids = await insertCoupons(40, 1_000, 6_000);
  await waitFor('every coupon expired', () => allExpired(ids), { timeoutMs: 90_000, intervalMs: 250 });

  const rows = (await db('coupons').whereIn('id', ids).select('expire_time', 'expired_at')) as Array<{ expire_time: Date; expired_at: Date }>;
  for (const r of rows) expect(r.expired_at.getTime()).toBeGreaterThanOrEqual(r.expire_time.getTime());
  const [events] = await db('outbox').where({ entity_type: 'coupon' }).whereIn('entity_id', ids).count({ n: '*' });
  expect(Number(events!.n)).toBe(ids.length);
});

test('a poison CDC record goes to the DLQ with its reason and its partition keeps flowing', async () => {
  pipeline = await createTestPipeline();
  const poison = `not json ${uniqueName('poison')}`;
  const producer = kafka.producer();
  await producer.connect();
  // One poison record in front of every partition, so whichever partition the next coupon's
  // change lands in, it sits behind poison.
  const meta = await (async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return await admin.fetchTopicMetadata({ topics: [baseConfig.cdc.couponsTopic] });
    } finally {
      await admin.disconnect();
    }
  })();
  const partitions = meta.topics[0]!.partitions.map((p) => p.partitionId);
  await producer.send({ topic: baseConfig.cdc.couponsTopic, messages: partitions.map((partition) => ({ partition, key: 'poison', value: poison })) });
  await producer.disconnect();

  await pipeline.start();
  const ids = await insertCoupons(8, 500, 2_000);
  await waitFor('coupons behind the poison record expired', () => allExpired(ids), { timeoutMs: 90_000, intervalMs: 250 });

  const dead: Array<{ reason: string; source: string; code: string }> = [];
  const consumer = kafka.consumer({ groupId: uniqueName('tb-dlq'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic: dlqTopic(pipeline.topology), fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (message.value?.toString() !== poison) return;
      dead.push({
        reason: message.headers?.['dlq_reason']?.toString() ?? '',
        source: message.headers?.['dlq_source_topic']?.toString() ?? '',
        code: message.headers?.['dlq_error_code']?.toString() ?? '',
      });
    },
  });
  try {
    await waitFor('every poison record in the DLQ', () => (dead.length >= partitions.length ? true : undefined), { timeoutMs: 30_000 });
  } finally {
    await consumer.disconnect();
  }
  expect(dead).toHaveLength(partitions.length);
  for (const d of dead) expect(d).toEqual({ reason: 'value is not JSON', source: baseConfig.cdc.couponsTopic, code: 'CDC_UNDECODABLE' });
});

test('a partition at its memory cap pauses and resumes as it drains: bounded memory, nothing dropped', async () => {
  const cap = 3;
  pipeline = await createTestPipeline({ env: { TB_MAX_IN_MEMORY_PER_PARTITION: String(cap), TB_EXPIRER_BATCH_SIZE: '2', TB_EXPIRER_CONCURRENCY: '1' } });
  await pipeline.start();
  let largest = 0;
  const sampler = setInterval(() => {
    void pipeline?.metrics.largestPartitionInMemory.get().then((g) => {
      for (const v of g.values) if (v.labels['stage'] === 'expirer') largest = Math.max(largest, v.value);
    });
  }, 20);
  try {
    // Many entries per partition, all released at once: far more than the cap.
    const ids = await insertCoupons(120, 1_500, 1_000);
    await waitFor('every coupon expired', () => allExpired(ids), { timeoutMs: 90_000, intervalMs: 250 });
    const [events] = await db('outbox').where({ entity_type: 'coupon' }).whereIn('entity_id', ids).count({ n: '*' });
    expect(Number(events!.n)).toBe(ids.length);
  } finally {
    clearInterval(sampler);
  }
  expect(largest).toBeGreaterThan(0);
  expect(largest).toBeLessThanOrEqual(cap);
});
