/**
 * What the hold consumer keeps of the messages kafkajs hands it. A message holds buffers sliced
 * from its whole fetch response, and a batch holds every message fetched behind its head (up to
 * a MiB per partition), so neither may outlive its use:
 *   - a held partition keeps nothing of its batch. kafkajs's pause() returns a resume function
 *     that shares a closure scope with resolveOffset, and so holds the batch; kept by a hold
 *     timer, that memory stayed for as long as the partition was held (minutes to hours) and
 *     grew with everything scheduled ahead (the scheduled-ahead bench).
 *   - an entry taken but not finished keeps only its offset, not its message.
 * The payloads below keep what kafkajs's keep: the function their pause() returns holds the batch.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ConsumerRunConfig, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { HeldRecordReader } from '../../../src/core/held-record';
import { HoldConsumer } from '../../../src/hold/hold-consumer';
import { createLogger } from '../../../src/ops/logger';
import { fakeConsumer, message } from '../../support/fake-consumer';
import { waitFor } from '../../support/wait-for';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const topic = 'tbtest.minute.07';

const reader: HeldRecordReader = (r) => ({
  topic: r.topic,
  partition: r.partition,
  offset: r.offset,
  shard: 0,
  bucketStartMs: 0,
  releaseAtMs: Number(r.headers?.['release_at'] ?? 0),
  entry: { entity: 'coupon', transition: 'expired', id: r.offset, expireAtMs: 0 },
});

type EachBatch = NonNullable<ConsumerRunConfig['eachBatch']>;

/**
 * `count` messages released at `releaseAt`, handed over as kafkajs would: pause() and the function
 * it returns act on the consumer's paused set, and that function closes over the batch. Returns
 * only weak references, to the batch and to its first message.
 */
async function feed(eachBatch: EachBatch, paused: Set<string>, count: number, releaseAt: number): Promise<{ batch: WeakRef<object>; first: WeakRef<object> }> {
  const messages: KafkaMessage[] = Array.from({ length: count }, (_, i) =>
    message(i, { value: Buffer.alloc(100), headers: { release_at: String(releaseAt) } }),
  );
  const batch = { topic, partition: 0, highWatermark: String(count), messages };
  const payload = {
    batch,
    resolveOffset: (offset: string) => void (offset === batch.messages[batch.messages.length - 1]?.offset),
    heartbeat: async () => undefined,
    pause: () => {
      paused.add(`${topic}:0`);
      return () => void (batch.messages.length > 0 && paused.delete(`${topic}:0`));
    },
    isRunning: () => true,
    isStale: () => false,
    commitOffsetsIfNecessary: async () => undefined,
    uncommittedOffsets: () => ({ topics: [] }),
  } as unknown as EachBatchPayload;
  await eachBatch(payload);
  return { batch: new WeakRef(batch), first: new WeakRef(messages[0]!) };
}

/**
 * Whether the target of `ref` can be collected. A weak reference keeps its target to the end of
 * the job that made it, and a just-finished callback's objects may stay reachable a little
 * longer: a few rounds, each after a timer, before saying it is kept.
 */
async function collectable(ref: WeakRef<object>): Promise<boolean> {
  for (let round = 0; round < 20; round += 1) {
    await new Promise((r) => setTimeout(r, 5));
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}

async function withStage(
  test: (s: { fake: ReturnType<typeof fakeConsumer>; eachBatch: EachBatch; taken: Array<() => void>; stage: HoldConsumer }) => Promise<void>,
): Promise<void> {
  const fake = fakeConsumer();
  let eachBatch: ConsumerRunConfig['eachBatch'];
  const run = fake.consumer.run;
  fake.consumer.run = async (config) => {
    eachBatch = config?.eachBatch;
    return run(config);
  };
  const taken: Array<() => void> = [];
  const stage = new HoldConsumer({
    consumer: fake.consumer,
    group: 'g.expirer',
    topics: [topic],
    read: reader,
    sink: { take: (_, done) => void taken.push(done), reset: () => undefined, dueCount: () => 0, close: () => undefined },
    reroute: { take: () => undefined, reset: () => undefined, dueCount: () => 0, close: () => undefined },
    dlq: { send: async () => undefined, sendAll: async () => undefined },
    clock: { now: () => Date.now() },
    maxInMemoryPerPartition: 100,
    commitIntervalMs: 10,
    stallMs: 60_000,
    logger: createLogger('silent'),
  });
  await stage.start();
  try {
    fake.joinGroup({ [topic]: [0] });
    await test({ fake, eachBatch: eachBatch!, taken, stage });
    expect(stage.lifecycle).toBe('RUNNING');
  } finally {
    await stage.stop();
  }
}

test('a held partition keeps nothing of its batch', async () => {
  await withStage(async ({ fake, eachBatch, stage }) => {
    // Released in a minute: a timer that kept the batch would keep it through the test.
    const { batch } = await feed(eachBatch, fake.paused, 1_000, Date.now() + 60_000);
    expect(fake.paused.has(`${topic}:0`)).toBe(true);
    expect(stage.stats().heldPartitions).toBe(1);
    expect(await collectable(batch)).toBe(true);
  });
});

test('an entry taken but not finished keeps nothing of its message', async () => {
  await withStage(async ({ fake, eachBatch, taken }) => {
    const { first } = await feed(eachBatch, fake.paused, 3, 0);
    expect(taken).toHaveLength(3);
    expect(await collectable(first)).toBe(true);
    taken.forEach((done) => done());
    await waitFor('the finished entries to be committed', () => (fake.commits.at(-1)?.[0]?.offset === '3' ? true : undefined), {
      timeoutMs: 2_000,
      intervalMs: 10,
    });
  });
});
