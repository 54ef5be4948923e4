/**
 * Finding 1 of the reliability review: a hold must not leave a position behind that outlives a
 * rejoin. The window is forced: the member holding entries it took but has not finished is in a
 * long fetch when a second member joins; the record that then arrives is held, and the heartbeat
 * after that very batch is the one that detects the rebalance. In the next generation that owns
 * the partition, reading must restart at the committed offset (nothing was committed), so the
 * unfinished entries are taken again. A position left by the hold (a queued kafkajs seek) would
 * start the new generation at the held record and lose them.
 *
 * @lane isolated
 */
import type { Admin, Consumer, Kafka, Producer } from 'kafkajs';
import { systemClock } from '../../../src/core/clock';
import type { HeldMessage, HeldRecordReader } from '../../../src/core/held-record';
import { HoldConsumer, HoldSink } from '../../../src/hold/hold-consumer';
import { createKafka } from '../../../src/kafka/client';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor, withTimeout } from '../../support/wait-for';
import { createTestTopics } from '../../support/topics';

/** A sink that never finishes anything and records each take with the generation it saw. */
class RecordingSink implements HoldSink {
  generation = 0;
  readonly takes: Array<{ generation: number; offset: string }> = [];
  take(msg: HeldMessage): void {
    this.takes.push({ generation: this.generation, offset: msg.offset });
  }
  reset(): void {
    this.generation += 1;
  }
  dueCount(): number {
    return 0;
  }

  close(): void {
    this.reset();
  }
  offsetsTakenIn(generation: number): string[] {
    return this.takes.filter((t) => t.generation === generation).map((t) => t.offset);
  }
}

/** Release time from a header: enough for a test of positions (rules are held-record.ts's job). */
const readReleaseHeader: HeldRecordReader = (r) => ({
  topic: r.topic,
  partition: r.partition,
  offset: r.offset,
  shard: 0,
  bucketStartMs: 0,
  releaseAtMs: Number(r.headers?.['release_at']?.toString()),
  entry: { entity: 'coupon', transition: 'expired', id: '1', expireAtMs: 0 },
});

let kafka: Kafka;
let admin: Admin;
let producer: Producer;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  kafka = createKafka(config.kafka, logger, '-test-rebalance');
  admin = kafka.admin();
  producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await Promise.all([admin.disconnect(), producer.disconnect()]);
});

test('after a rebalance detected right after a hold, the partition is re-read from the committed offset', async () => {
  const topic = uniqueName('tbt-rebalance');
  const group = uniqueName('tbt-rebalance-group');
  await createTestTopics(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }]);
  cleanups.push(() => admin.deleteTopics({ topics: [topic] }));

  const sink = new RecordingSink();
  // A long fetch wait: the member sits in a fetch while the second one joins, so its first
  // heartbeat after the join is the one after the batch that ends in a hold.
  const consumerA = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 100, maxWaitTimeInMs: 5_000 });
  const assignments: Array<Record<string, number[]>> = [];
  consumerA.on(consumerA.events.GROUP_JOIN, (e) => void assignments.push(e.payload.memberAssignment));
  const stage = new HoldConsumer({
    consumer: consumerA,
    group,
    topics: [topic],
    read: readReleaseHeader,
    sink,
    reroute: { take: () => undefined, reset: () => undefined, dueCount: () => 0, close: () => undefined },
    dlq: { send: async () => undefined, sendAll: async () => undefined },
    clock: systemClock,
    maxInMemoryPerPartition: 1_000,
    commitIntervalMs: 100,
    stallMs: 60_000,
    logger,
  });
  await stage.start();
  cleanups.push(() => stage.stop());
  await withTimeout('the first member to join', stage.joined(), 30_000);

  // Five released entries, taken and never finished (nothing is ever committed).
  await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ value: `released-${i}`, headers: { release_at: '0' } })) });
  await waitFor('five entries taken', () => (sink.offsetsTakenIn(1).length === 5 ? true : undefined), { timeoutMs: 20_000 });
  expect(sink.offsetsTakenIn(1)).toEqual(['0', '1', '2', '3', '4']);

  // A second member joins; once the group is rebalancing, the held record arrives.
  const consumerB: Consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 100, maxWaitTimeInMs: 250 });
  await consumerB.connect();
  cleanups.push(() => consumerB.disconnect());
  await consumerB.subscribe({ topics: [topic], fromBeginning: true });
  // run() resolves only once the rebalance completed: not awaited here, it is what is being raced.
  const joiningB = consumerB.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => undefined });
  await waitFor(
    'the group to start rebalancing',
    async () => {
      const { groups } = await admin.describeGroups([group]);
      return groups[0]?.state === 'PreparingRebalance' ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 20 },
  );
  await producer.send({ topic, messages: [{ value: 'held', headers: { release_at: String(Date.now() + 3_600_000) } }] });

  await withTimeout('the second member to join', joiningB, 30_000);
  // The generation after the join; if the partition went to the other member, the first member
  // gets it back when that one leaves.
  await waitFor('the first member to rejoin', () => (sink.generation >= 2 ? true : undefined), { timeoutMs: 30_000 });
  let generation = 2;
  if (!(assignments[assignments.length - 1]?.[topic] ?? []).includes(0)) {
    await consumerB.disconnect();
    await waitFor('the partition to come back', () => ((assignments[assignments.length - 1]?.[topic] ?? []).includes(0) ? true : undefined), {
      timeoutMs: 30_000,
    });
    generation = sink.generation;
  }
  await waitFor(`the unfinished entries to be read again in generation ${generation}`, () => (sink.offsetsTakenIn(generation).length >= 5 ? true : undefined), {
    timeoutMs: 15_000,
  });
  expect(sink.offsetsTakenIn(generation)).toEqual(['0', '1', '2', '3', '4']);
  await waitFor('the held record to hold the partition again', () => (stage.stats().heldPartitions === 1 ? true : undefined), { timeoutMs: 10_000 });
});
