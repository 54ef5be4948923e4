/**
 * The broker is real and behaves as the pipeline needs: consumer groups, holding one partition
 * by pause/seek/resume in eachBatch (eachBatchAutoResolve off) while another flows, and the admin
 * calls that topic management and bucket replay rely on.
 *
 * @lane isolated
 */
import { Admin, Consumer, EachBatchPayload, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { createKafka } from '../../../src/kafka/client';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';
import { createTestTopics } from '../../support/topics';

let kafka: Kafka;
let admin: Admin;
let producer: Producer;
const consumers: Consumer[] = [];

beforeAll(async () => {
  kafka = createKafka(config.kafka, logger, '-test');
  admin = kafka.admin();
  producer = kafka.producer({ idempotent: true });
  await Promise.all([admin.connect(), producer.connect()]);
});

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.disconnect()));
});

afterAll(async () => {
  await Promise.all([admin.disconnect(), producer.disconnect()]);
});

function newConsumer(groupId: string): Consumer {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 });
  consumers.push(consumer);
  return consumer;
}

async function createTopic(partitions: number): Promise<string> {
  const topic = uniqueName('tb-test');
  await createTestTopics(admin, [{ topic, numPartitions: partitions }]);
  return topic;
}

const header = (m: KafkaMessage, name: string): string => m.headers?.[name]?.toString() ?? '';

test('produces and consumes through a consumer group', async () => {
  const topic = await createTopic(2);
  await producer.send({ topic, messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i % 4}`, value: `v${i}` })) });

  const seen: string[] = [];
  const consumer = newConsumer(uniqueName('tb-group'));
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? '') });

  await waitFor('all 20 messages', () => (seen.length >= 20 ? true : undefined));
  expect([...seen].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`).sort());
});

test('holds a partition mid-batch (pause, seek back, resume by timer) while another keeps flowing', async () => {
  const topic = await createTopic(2);
  const groupId = uniqueName('tb-hold');
  const holdMs = 5_000;
  const dueAt = Date.now() + holdMs;

  // Partition 0: five messages already due, then five due in `holdMs`.
  await producer.send({
    topic,
    messages: Array.from({ length: 10 }, (_, i) => ({
      partition: 0,
      value: `p0-${i}`,
      headers: { due_at: String(i < 5 ? 0 : dueAt) },
    })),
  });
  await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ partition: 1, value: `p1-${i}`, headers: { due_at: '0' } })) });

  const processed: Array<{ partition: number; offset: string; value: string; at: number }> = [];
  let pausedAtOffset: string | undefined;
  const consumer = newConsumer(groupId);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, pause, isRunning, isStale }: EachBatchPayload) => {
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break;
        const due = Number(header(message, 'due_at'));
        if (due > Date.now()) {
          // Not due: stop here, rewind to this message and come back when it is due.
          const resume = pause();
          consumer.seek({ topic: batch.topic, partition: batch.partition, offset: message.offset });
          pausedAtOffset = message.offset;
          setTimeout(resume, due - Date.now());
          break;
        }
        processed.push({ partition: batch.partition, offset: message.offset, value: message.value?.toString() ?? '', at: Date.now() });
        resolveOffset(message.offset);
        await heartbeat();
      }
      await commitOffsetsIfNecessary();
    },
  });

  await waitFor('partition 0 to pause at its first undue message', () => pausedAtOffset);
  expect(pausedAtOffset).toBe('5');

  // While partition 0 is held, partition 1 keeps flowing, including messages produced now.
  await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ partition: 1, value: `p1-${5 + i}`, headers: { due_at: '0' } })) });
  await waitFor('partition 1 to drain', () => (processed.filter((p) => p.partition === 1).length === 10 ? true : undefined));
  expect(processed.filter((p) => p.partition === 0).map((p) => p.value)).toEqual(['p0-0', 'p0-1', 'p0-2', 'p0-3', 'p0-4']);

  // Nothing committed past the first unprocessed message of the held partition.
  const committed = await waitFor('a commit for partition 0', async () => {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const p0 = offsets?.partitions.find((p) => p.partition === 0);
    return p0 && p0.offset !== '-1' ? p0.offset : undefined;
  });
  expect(Number(committed)).toBeLessThanOrEqual(5);

  // After the timer, the held messages are processed, in order, none skipped, none early.
  await waitFor('partition 0 to finish after its due time', () => (processed.filter((p) => p.partition === 0).length >= 10 ? true : undefined), {
    timeoutMs: holdMs + 30_000,
  });
  const p0 = processed.filter((p) => p.partition === 0);
  expect(p0.map((p) => p.offset)).toEqual(Array.from({ length: 10 }, (_, i) => String(i)));
  for (const late of p0.slice(5)) expect(late.at).toBeGreaterThanOrEqual(dueAt);
  const p1 = processed.filter((p) => p.partition === 1);
  expect(p1.map((p) => p.value)).toEqual(Array.from({ length: 10 }, (_, i) => `p1-${i}`));
  await waitFor('final commit of partition 0', async () => {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return offsets?.partitions.find((p) => p.partition === 0)?.offset === '10' ? true : undefined;
  });
});

describe('admin', () => {
  test('creates topics idempotently and deletes them', async () => {
    const topic = uniqueName('tb-admin');
    await expect(createTestTopics(admin, [{ topic, numPartitions: 3 }])).resolves.toBe(true);
    await expect(createTestTopics(admin, [{ topic, numPartitions: 3 }])).resolves.toBe(false);
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(meta.topics[0]?.partitions).toHaveLength(3);

    await admin.deleteTopics({ topics: [topic] });
    await waitFor('the topic to disappear', async () => ((await admin.listTopics()).includes(topic) ? undefined : true));
  });

  test('finds offsets by timestamp and moves an empty group with setOffsets', async () => {
    const topic = await createTopic(1);
    const t0 = Date.now() - 60_000;
    await producer.send({
      topic,
      messages: [0, 1, 2, 3].map((i) => ({ value: `m${i}`, timestamp: String(t0 + i * 1_000) })),
    });

    const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, t0 + 2_000);
    expect(byTime).toEqual([{ partition: 0, offset: '2' }]);

    // Consume everything once, so the group has committed offsets at the end.
    const groupId = uniqueName('tb-replay');
    const first: string[] = [];
    const consumer = newConsumer(groupId);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void first.push(message.value?.toString() ?? '') });
    await waitFor('the first pass', () => (first.length === 4 ? true : undefined));

    // A group with a live member refuses an offset reset.
    await expect(admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }] })).rejects.toThrow();

    await consumer.disconnect();
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: byTime[0]!.offset }] });

    const replayed: string[] = [];
    const again = newConsumer(groupId);
    await again.connect();
    await again.subscribe({ topic });
    await again.run({ eachMessage: async ({ message }) => void replayed.push(message.value?.toString() ?? '') });
    await waitFor('the replay from offset 2', () => (replayed.length === 2 ? true : undefined));
    expect(replayed).toEqual(['m2', 'm3']);
  });
});
