/**
 * `timebucket explain`'s look on Kafka, against a test pipeline's topics. First with nothing of
 * the pipeline running: an entry written by the project's own router is found at its offset,
 * "taken by its reader" once the tier's group commits past it, and a row with no entry is named
 * as one whose change never reached the rings (what the scanner or backfill then do); the
 * command prints the same. Then with the stream running: a coupon moved by the stream, its
 * event found on the event topic at the partition and offset a subscriber reads it from.
 *
 * @lane isolated
 */
import type { Admin, Kafka } from 'kafkajs';
import { eventPathOf, explainRow } from '../../../src/cli/explain-command';
import { wireLook, type WireLook } from '../../../src/cli/explain-wire';
import { systemClock } from '../../../src/core/clock';
import { bucketRecord } from '../../../src/core/bucket-record';
import { createKafka } from '../../../src/kafka/client';
import { createDb, type Db } from '../../../src/db/knex';
import { liveGroupOfTier } from '../../../src/replay/bucket-window';
import { defaultCatalogue } from '../../support/catalogue';
import { spawnCli } from '../../support/cli';
import { createTestPipeline, type TestPipeline } from '../../support/pipeline';
import { logger } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

let pipeline: TestPipeline;
let kafka: Kafka;
let admin: Admin;
let wire: WireLook;
let db: Db;

beforeAll(async () => {
  // Tiers wide enough that a row due in 100 s stays scheduled, in one day bucket, for the whole
  // first test (each look joins a throwaway group: seconds).
  pipeline = await createTestPipeline({
    editTopology: (raw) => {
      raw.tiers[1] = { ...raw.tiers[1]!, widthMs: 8_000, leadMs: 1_000 };
      raw.tiers[2] = { ...raw.tiers[2]!, widthMs: 40_000, leadMs: 4_000 };
    },
  });
  db = createDb(pipeline.config.db);
  kafka = createKafka(pipeline.config.kafka, logger, '-test-explain');
  admin = kafka.admin();
  await admin.connect();
  wire = wireLook({
    kafka,
    topology: pipeline.topology,
    catalogue: defaultCatalogue,
    groupPrefix: pipeline.config.groupPrefix,
    maxRecords: 10_000,
    clock: systemClock,
    logger,
  });
});

afterAll(async () => {
  await pipeline?.stopAll();
  await admin?.disconnect();
  await db?.destroy();
});

/** A coupon of the stack's database (captured by its connector), due `dueSql`. */
async function coupon(dueSql: string): Promise<string> {
  const [id] = await db('coupons').insert({ user_id: 8, face_value: 5, status: 'ACTIVE', expire_time: db.raw(dueSql) });
  return String(id);
}

async function look(id: string) {
  const pathOf = eventPathOf(pipeline.config.registry);
  const e = await explainRow(pipeline.config, pipeline.topology, defaultCatalogue, 'coupon', id, { wire, pathOf });
  if (!e.found) throw new Error(`coupon ${id} not found`);
  return e.transitions[0]!;
}

test('nothing running: an entry found at its offset, taken once its reader commits past it; a row whose change never reached the rings is named; the command prints the look', async () => {
  // Due in 100 s: beyond the minute and hour horizons (9 s, 48 s), in the day ring.
  const scheduled = await coupon('NOW(3) + INTERVAL 100 SECOND');
  const never = await coupon('NOW(3) + INTERVAL 100 SECOND');
  const due = (await db('coupons').where({ id: scheduled }).first()) as { expire_time: Date };
  const producer = kafka.producer();
  await producer.connect();
  const record = bucketRecord(
    pipeline.topology,
    defaultCatalogue,
    { entity: 'coupon', transition: 'expired', id: scheduled, expireAtMs: due.expire_time.getTime() },
    Date.now(),
  );
  const [meta] = await producer.send({
    topic: record.topic,
    acks: -1,
    messages: [{ partition: record.partition, key: record.key, value: record.value, headers: record.headers }],
  });
  await producer.disconnect();
  const offset = meta!.baseOffset!;

  const found = await look(scheduled);
  expect(found).toMatchObject({
    state: 'scheduled',
    entry: { found: { tier: 'day', topic: record.topic, partition: record.partition, offset, consumed: false }, complete: true },
  });
  expect(found.verdict).toContain(`; entry found in the day ring's topic ${record.topic}, partition ${record.partition}, offset ${offset} (not yet read)`);
  const run = spawnCli(['explain', 'coupon', scheduled], pipeline.env);
  expect((await run.exited).code).toBe(0);
  expect(run.stdout()).toContain(`entry found in the day ring's topic ${record.topic}, partition ${record.partition}, offset ${offset} (not yet read)`);

  await admin.setOffsets({
    groupId: liveGroupOfTier(pipeline.config.groupPrefix, 2),
    topic: record.topic,
    partitions: [{ partition: record.partition, offset: String(BigInt(offset) + 1n) }],
  });
  expect((await look(scheduled)).verdict).toContain(`offset ${offset} (taken by its reader)`);

  const missing = await look(never);
  expect(missing).toMatchObject({ state: 'scheduled', entry: { found: null, complete: true } });
  // The day bucket of its due time, and the coarsest ring's parking buckets before it not yet released.
  expect(missing.verdict).toMatch(
    /; no entry of it in \S+ partition \d+(, \S+ partition \d+)* \(\d+ records read\): no change of it has reached the rings since it became ACTIVE/,
  );
});

test('the stream running: a coupon it moved, its event found on the event topic at the partition and offset a subscriber reads', async () => {
  await pipeline.start();
  const id = await coupon('NOW(3) + INTERVAL 2 SECOND');
  // The outbox connector publishes after the expiry commits: until then the look says "not yet on the wire".
  const moved = await waitFor(
    'the coupon moved and its event on the wire',
    async () => {
      const t = await look(id);
      return t.state === 'transitioned' && t.event?.found != null ? t : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
  const { topic, partition, offset } = moved.event!.found!;
  expect(moved.verdict).toMatch(
    new RegExp(
      `^moved [0-9a-z ]+ after due by stream at .*; event coupon-expired-${id}-\\d+-\\d+ on ${topic.replace(/\./g, '\\.')}, partition ${partition}, offset ${offset}$`,
    ),
  );
  // The record at that offset is the event.
  const [read] = await readAt(topic, partition, offset);
  expect(read?.headers?.['event_key']?.toString()).toBe(moved.outbox[0]!.eventKey);
});

/** The record at one offset, read by a consumer of a throwaway group. */
async function readAt(topic: string, partition: number, offset: string) {
  const groupId = `${pipeline.config.groupPrefix}.test-read.${Date.now()}`;
  await admin.setOffsets({ groupId, topic, partitions: [{ partition, offset }] });
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic] });
    const got: Array<{ headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined> }> = [];
    void consumer.run({ eachMessage: async ({ partition: p, message }) => void (p === partition && message.offset === offset && got.push(message)) });
    await waitFor('the record at its offset', () => (got.length > 0 ? true : undefined), { timeoutMs: 30_000, intervalMs: 200 });
    return got as Array<{ headers?: Record<string, { toString(): string } | undefined> }>;
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
  }
}
