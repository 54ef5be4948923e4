/**
 * Where a new group starts, against the real broker. kafkajs resolves "latest" when the member
 * first fetches, so records written while a deployment starts up would be skipped; positions
 * taken at start and committed before the join keep them (kafka/pin-group-start.ts).
 *
 * @lane isolated
 */
import type { Admin, Kafka } from 'kafkajs';
import { createKafka } from '../../../src/kafka/client';
import { pinGroup, pinNewGroupToEnd, startPositions } from '../../../src/kafka/pin-group-start';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';
import { createTestTopics } from '../../support/topics';

let kafka: Kafka;
let admin: Admin;
const topic = uniqueName('tbpin');

beforeAll(async () => {
  kafka = createKafka(config.kafka, logger, '-test-pin');
  admin = kafka.admin();
  await admin.connect();
  await createTestTopics(admin, [{ topic, numPartitions: 2 }]);
});

afterAll(async () => {
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
});

async function produce(values: string[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: values.map((value, i) => ({ value, partition: i % 2 })) });
  await producer.disconnect();
}

/**
 * Joins `groupId` as the repartitioner does (fromBeginning: false) and collects what it reads,
 * until `until` holds; `tick` runs on every check (e.g. to write a marker).
 */
async function readAs(groupId: string, until: (seen: string[]) => boolean, tick: () => Promise<void> = async () => undefined): Promise<string[]> {
  const seen: string[] = [];
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: false });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
  try {
    await waitFor('the records', async () => (until(seen) ? true : (await tick(), undefined)), { timeoutMs: 20_000, intervalMs: 100 });
    return seen;
  } finally {
    await consumer.disconnect();
  }
}

test('records written between taking the positions and the first join are read, older ones are not', async () => {
  await produce(['before-1', 'before-2']);
  const group = uniqueName('tbpin-group');
  const positions = await startPositions(admin, group, [topic]);
  expect(positions).toBeDefined();
  // The deployment is "up"; its member has not joined yet when these are written.
  await produce(['during-1', 'during-2', 'during-3']);
  expect(await pinGroup(admin, group, positions!)).toBe('pinned');
  await produce(['after-1']);
  const seen = await readAs(group, (s) => s.includes('after-1'));
  expect(seen.sort()).toEqual(['after-1', 'during-1', 'during-2', 'during-3']);
});

test('without the pin the same join skips them: what the pin is for', async () => {
  const group = uniqueName('tbpin-unpinned');
  await produce(['skipped-1', 'skipped-2']);
  // Markers until one is read: the member has then resolved its start, after the skipped ones.
  const seen = await readAs(
    group,
    (s) => s.some((v) => v.startsWith('marker')),
    () => produce(['marker']),
  );
  expect(seen.filter((v) => v.startsWith('skipped'))).toEqual([]);
});

test('a group that has committed offsets is left alone', async () => {
  const group = uniqueName('tbpin-committed');
  await admin.setOffsets({
    groupId: group,
    topic,
    partitions: [
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ],
  });
  expect(await startPositions(admin, group, [topic])).toBeUndefined();
  expect(await pinNewGroupToEnd(admin, group, [topic])).toBe('has-offsets');
  const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  expect(offsets[0]!.partitions.map((p) => p.offset).sort()).toEqual(['0', '0']);
});

test('a topic that does not exist yet is read from its beginning once it appears', async () => {
  const late = uniqueName('tbpin-late');
  const group = uniqueName('tbpin-lategroup');
  const positions = await startPositions(admin, group, [late]);
  expect(positions?.get(late)).toBeNull();
  await createTestTopics(admin, [{ topic: late, numPartitions: 1 }]);
  try {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: late, messages: [{ value: 'first-change' }] });
    await producer.disconnect();
    expect(await pinGroup(admin, group, positions!)).toBe('pinned');
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [late] });
    expect(offsets[0]!.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '0' })]);
  } finally {
    await admin.deleteTopics({ topics: [late] }).catch(() => undefined);
  }
});
