/**
 * Topics a test creates itself, ready once every broker knows every partition's leader. Not
 * kafkajs's `createTopics({ waitForLeaders: true })`: its wait retries only LEADER_NOT_AVAILABLE,
 * and a broker whose metadata does not know the topic yet (a busy one, with other lanes' tests
 * creating topics too) answers UNKNOWN_TOPIC_OR_PARTITION, which it throws. The wait is the one
 * `topics apply` uses, asked of each broker: a consumer's subscribe asks whichever broker it is
 * connected to, and kafkajs gives up at once on that same answer (its metadata refresh retries
 * only LEADER_NOT_AVAILABLE), so on the three-node stack one broker that learnt of the topic a
 * moment later failed a test's reader ("This server does not host this topic-partition").
 */
import type { Admin, ITopicConfig, Kafka } from 'kafkajs';
import { createKafka } from '../../src/kafka/client';
import { waitForLeaders } from '../../src/kafka/topics-apply';
import { config, logger } from './stack';
import { withTimeout } from './wait-for';

const TIMEOUT_MS = 60_000;

/** Creates `topics` (those that exist are left as they are); resolves whether any was created. */
export async function createTestTopics(admin: Admin, topics: ITopicConfig[]): Promise<boolean> {
  const created = await admin.createTopics({ topics, waitForLeaders: false });
  await knownToEveryBroker(admin, new Map(topics.map((t) => [t.topic, t.numPartitions ?? 1])));
  return created;
}

/** Until every broker knows each of `partitions`' topics with (at least) that many partitions, each with a leader. */
export async function knownToEveryBroker(admin: Admin, partitions: ReadonlyMap<string, number>): Promise<void> {
  const names = [...partitions.keys()];
  await waitForLeaders(admin, names, partitions, TIMEOUT_MS);
  await waitOnEveryBroker(admin, (one) => waitForLeaders(one, names, partitions, TIMEOUT_MS));
}

/**
 * `wait` with an admin client whose only seed is one broker, for each broker of the cluster: its
 * metadata requests go to that broker (the advertised address is the seed's, so kafkajs reuses
 * the seed's connection for it). Nothing to do on a one-broker stack.
 */
async function waitOnEveryBroker(admin: Admin, wait: (one: Admin) => Promise<void>): Promise<void> {
  const { brokers } = await admin.describeCluster();
  if (brokers.length <= 1) return;
  await Promise.all(
    brokers.map(async (b) => {
      const one = createKafka({ ...config.kafka, brokers: [`${b.host}:${b.port}`] }, logger, `-test-topics-${b.nodeId}`).admin();
      await one.connect();
      try {
        await wait(one);
      } finally {
        await one.disconnect();
      }
    }),
  );
}

/**
 * Each partition of `topic` read from its start to its end as it is now: the offset of its first
 * record whose header `name` is `value`, and how many such records it holds (partitions holding
 * none are left out). A plain consumer of a group of its own, deleted afterwards: what a test
 * expects of a bucket is read from the topic itself, duplicates included, not from the code
 * under test.
 */
export async function recordsWithHeader(kafka: Kafka, topic: string, name: string, value: string): Promise<Map<number, { first: string; count: number }>> {
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `test-read-${topic}-${Date.now()}`;
  const consumer = kafka.consumer({ groupId });
  try {
    const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
    const pending = new Set([...ends].filter(([, high]) => high > 0n).map(([p]) => p));
    const found = new Map<number, { first: string; count: number }>();
    let done!: () => void;
    const allRead = new Promise<void>((resolve) => (done = resolve));
    if (pending.size === 0) done();
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (message.headers?.[name]?.toString() === value) {
          const seen = found.get(partition);
          found.set(partition, { first: seen?.first ?? message.offset, count: (seen?.count ?? 0) + 1 });
        }
        if (BigInt(message.offset) + 1n >= ends.get(partition)!) pending.delete(partition);
        if (pending.size === 0) done();
      },
    });
    await withTimeout(`reading ${topic} to its end`, allRead, TIMEOUT_MS);
    return found;
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}
