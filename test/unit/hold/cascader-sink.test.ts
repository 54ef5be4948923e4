import { type BucketEntry } from '../../../src/core/bucket-entry';
import { decodeBucketEntry } from '../../../src/core/bucket-entry-codec';
import { partitionOfRoute, route, shardOf } from '../../../src/core/router';
import { parseTopology } from '../../../src/core/topology';
import { CascaderSink, type CascaderSinkOptions } from '../../../src/hold/cascader-sink';
import type { HeldMessage } from '../../../src/hold/hold-consumer';
import { createLogger } from '../../../src/ops/logger';
import testTopologyJson from '../../../topics/test.json';
import { deferred, heldMessage } from '../../support/fake-held-message';
import { fakeProducer } from '../../support/fake-producer';
import { defaultCatalogue } from '../../support/catalogue';

// tbtest: 4 shards; minute 1 s × 12 (4 partitions), hour 4 s × 8 (2), day 16 s × 6 (2), due (4).
const topology = parseTopology(testTopologyJson, 'topics/test.json');
const T0 = 1_700_000_000_000; // a multiple of 16 s: every tier's bucket starts here

function harness(opts: Partial<CascaderSinkOptions> = {}) {
  const fake = fakeProducer();
  const cascaded: number[] = [];
  const sink = new CascaderSink({
    producer: fake.producer,
    topology,
    catalogue: defaultCatalogue,
    clock: { now: () => Date.now() },
    flushIntervalMs: 50,
    maxBatchSize: 10,
    logger: createLogger('silent'),
    onCascaded: (count) => cascaded.push(count),
    backoff: { baseMs: 200, maxMs: 5_000 },
    random: () => 1,
    ...opts,
  });
  const done: string[] = [];
  const take = (m: HeldMessage): void => sink.take(m, () => done.push(m.entry.id));
  return { sink, fake, done, take, cascaded };
}

/** What the router says for `entry` at `nowMs`, in the shape the producer receives. */
function expected(entry: BucketEntry, nowMs: number) {
  const r = route(topology, entry.expireAtMs, nowMs);
  const shard = shardOf(entry.id, topology.shards);
  return {
    topic: r.topic,
    partition: partitionOfRoute(topology, r, shard),
    key: String(shard),
    headers: r.lane === 'ring' ? { bucket_start: String(r.bucketStartMs), tier: r.tierName } : { tier: 'due' },
  };
}

/** The recorded sendBatch calls flattened to one row per message, value decoded. */
function sent(fake: ReturnType<typeof fakeProducer>, call = 0) {
  return (fake.calls[call]?.topicMessages ?? []).flatMap(({ topic, messages }) =>
    messages.map((m) => ({ topic, partition: m.partition, key: m.key, headers: m.headers, entry: decodeBucketEntry(m.value as Buffer, defaultCatalogue) })),
  );
}

const settle = (): Promise<void> => jest.advanceTimersByTimeAsync(0);

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

describe('CascaderSink', () => {
  test('re-routes each entry with the router at the sink clock at flush time', async () => {
    const h = harness();
    const msgs = [
      heldMessage({ topic: 'tbtest.hour.00', id: '11', expireAtMs: T0 + 2_500 }), // → minute
      heldMessage({ topic: 'tbtest.hour.00', id: '12', expireAtMs: T0 + 20_000, entity: 'order' }), // → hour
      heldMessage({ topic: 'tbtest.hour.00', id: '13', expireAtMs: T0 + 40_000 }), // → day
      heldMessage({ topic: 'tbtest.hour.00', id: '14', expireAtMs: T0 + 30 }), // ringed at take time, due at flush
    ];
    for (const m of msgs) h.take(m);
    await jest.advanceTimersByTimeAsync(49);
    expect(h.fake.calls).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.fake.calls).toHaveLength(1);
    expect(h.fake.calls[0]!.acks).toBe(-1);
    const flushAt = T0 + 50;
    expect(sent(h.fake)).toEqual(expect.arrayContaining(msgs.map((m) => ({ ...expected(m.entry, flushAt), entry: m.entry }))));
    expect(sent(h.fake)).toHaveLength(4);
    // Spot-check the router's answers so the test does not merely mirror the implementation.
    const topicOf = Object.fromEntries(sent(h.fake).map((s) => [s.entry.id, s.topic]));
    expect(topicOf).toEqual({ '11': 'tbtest.minute.10', '12': 'tbtest.hour.05', '13': 'tbtest.day.04', '14': 'tbtest.due' });
    expect(sent(h.fake).find((s) => s.entry.id === '13')!.headers).toEqual({ bucket_start: String(T0 + 32_000), tier: 'day' });
    expect(h.done.sort()).toEqual(['11', '12', '13', '14']);
    expect(h.cascaded).toEqual([4]);
  });

  test('one sendBatch groups messages per topic', async () => {
    const h = harness();
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 2_100 }));
    h.take(heldMessage({ id: '2', expireAtMs: T0 - 1 }));
    h.take(heldMessage({ id: '3', expireAtMs: T0 + 2_900 }));
    await jest.advanceTimersByTimeAsync(50);
    const batch = h.fake.calls[0]!.topicMessages!;
    expect(batch.map((t) => [t.topic, t.messages.length])).toEqual([
      ['tbtest.minute.10', 2],
      ['tbtest.due', 1],
    ]);
  });

  test('flushes at once when the buffer reaches maxBatchSize, the rest by interval', async () => {
    const h = harness({ maxBatchSize: 3, flushIntervalMs: 1_000 });
    for (const id of ['1', '2', '3']) h.take(heldMessage({ id, expireAtMs: T0 + 5_000 }));
    expect(h.fake.calls).toHaveLength(1);
    expect(sent(h.fake).map((s) => s.entry.id)).toEqual(['1', '2', '3']);
    await settle();
    expect(h.done).toEqual(['1', '2', '3']);
    h.take(heldMessage({ id: '4', expireAtMs: T0 + 5_000 }));
    h.take(heldMessage({ id: '5', expireAtMs: T0 + 5_000 }));
    await jest.advanceTimersByTimeAsync(999);
    expect(h.fake.calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.fake.calls).toHaveLength(2);
    expect(sent(h.fake, 1).map((s) => s.entry.id)).toEqual(['4', '5']);
  });

  test('done() only after the send resolves', async () => {
    const h = harness();
    const ack = deferred<[]>();
    h.fake.respond = () => ack.promise;
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 5_000 }));
    await jest.advanceTimersByTimeAsync(50);
    expect(h.fake.calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(h.done).toEqual([]);
    expect(h.cascaded).toEqual([]);
    ack.resolve([]);
    await settle();
    expect(h.done).toEqual(['1']);
  });

  test('a failed send is retried with backoff, re-routed at the retry clock; done() only after success', async () => {
    const h = harness();
    h.fake.respond = (_call, i) => (i < 2 ? Promise.reject(new Error('broker down')) : Promise.resolve([]));
    const soon = heldMessage({ id: '1', expireAtMs: T0 + 400 }); // minute ring at T0 + 50, due by T0 + 650
    const later = heldMessage({ id: '2', expireAtMs: T0 + 60_000 });
    h.take(soon);
    h.take(later);
    await jest.advanceTimersByTimeAsync(50);
    expect(h.fake.calls).toHaveLength(1);
    expect(sent(h.fake, 0).map((s) => s.topic)).toEqual(['tbtest.minute.08', 'tbtest.day.05']);
    await jest.advanceTimersByTimeAsync(199); // 200 ms after the first failure (jitter at its ceiling)
    expect(h.fake.calls).toHaveLength(1);
    expect(h.done).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.fake.calls).toHaveLength(2);
    expect(h.done).toEqual([]);
    await jest.advanceTimersByTimeAsync(399); // 400 ms after the second
    expect(h.fake.calls).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.fake.calls).toHaveLength(3);
    expect(sent(h.fake, 2)).toEqual([
      { ...expected(soon.entry, T0 + 650), entry: soon.entry },
      { ...expected(later.entry, T0 + 650), entry: later.entry },
    ]);
    expect(sent(h.fake, 2).map((s) => s.topic)).toEqual(['tbtest.due', 'tbtest.day.05']);
    expect(h.done).toEqual(['1', '2']);
  });

  test('reset() drops the buffer: nothing is sent, done is never called', async () => {
    const h = harness();
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 5_000 }));
    h.sink.reset();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.fake.calls).toHaveLength(0);
    expect(h.done).toEqual([]);
  });

  test('reset() while a send is failing: the batch is not retried', async () => {
    const h = harness();
    const ack = deferred<[]>();
    h.fake.respond = () => ack.promise;
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 5_000 }));
    await jest.advanceTimersByTimeAsync(50);
    h.sink.reset();
    ack.reject(new Error('broker down'));
    await jest.advanceTimersByTimeAsync(10_000);
    expect(h.fake.calls).toHaveLength(1);
    expect(h.done).toEqual([]);
  });
});
