/**
 * The expirer under the operator's switches: a paused entity's due entries stay in the hold
 * (unfinished, counted as due lag, never committed past) while the other entity fires; on
 * resume everything due fires; a throttle cuts batches to the tokens available.
 */
import type { Transition } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import type { HeldRecordReader } from '../../../src/core/held-record';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { ExpirerSink } from '../../../src/hold/expirer-sink';
import { HoldConsumer } from '../../../src/hold/hold-consumer';
import { createTransitionGate } from '../../../src/control/gate';
import { createLogger } from '../../../src/ops/logger';
import { fakeConsumer, message } from '../../support/fake-consumer';
import { heldMessage } from '../../support/fake-held-message';
import { fakeSwitches } from '../../support/fake-switches';
import defaultEntities from '../../../entities/default.json';

const catalogue = parseEntityFile(defaultEntities, 'entities/default.json');

const T0 = 1_700_000_000_000;
const clock = { now: () => Date.now() };

function harness(o: { maxBatchSize?: number; maxConcurrentBatches?: number } = {}) {
  const switches = fakeSwitches();
  const calls: Array<{ entity: string; ids: string[]; at: number }> = [];
  const sink = new ExpirerSink({
    catalogue,
    expireBatch: async ({ entity }: Transition, entries: readonly ScheduledEntry[]): Promise<BatchOutcome> => {
      calls.push({ entity, ids: entries.map((e) => e.id), at: Date.now() });
      return { transitioned: entries.map((e) => ({ id: e.id, dueAtMs: e.expireAtMs })), notYetDue: [], stale: [], dbNowMs: Date.now() };
    },
    clock,
    maxBatchSize: o.maxBatchSize ?? 100,
    maxConcurrentBatches: o.maxConcurrentBatches ?? 4,
    backoff: { baseMs: 100, maxMs: 1_000 },
    maxAttempts: 3,
    cutOverGraceMs: 10_000,
    park: async () => undefined,
    logger: createLogger('silent'),
    gate: createTransitionGate(switches.reader, clock),
  });
  const done: string[] = [];
  const take = (entity: string, id: string, expireAtMs: number, shard = 0) => sink.take(heldMessage({ entity, id, expireAtMs, shard }), () => done.push(id));
  const ids = (entity: string) => calls.filter((c) => c.entity === entity).flatMap((c) => c.ids);
  return { sink, switches, calls, done, take, ids };
}

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

test('while coupons are paused their due entries stay held and count as due lag; orders fire; resume fires every due coupon', async () => {
  const h = harness();
  h.switches.pause('coupon');
  h.take('coupon', 'c1', T0 + 100);
  h.take('order', 'o1', T0 + 100);
  h.take('coupon', 'c2', T0 + 200);
  h.take('order', 'o2', T0 + 300);

  await jest.advanceTimersByTimeAsync(150);
  expect(h.sink.dueCount(Date.now())).toBe(1); // c1 (o1 is done)
  await jest.advanceTimersByTimeAsync(10_000);
  expect(h.ids('order')).toEqual(['o1', 'o2']);
  expect(h.ids('coupon')).toEqual([]);
  expect(h.done).toEqual(['o1', 'o2']);
  expect(h.sink.waiting).toBe(2);
  expect(h.sink.dueCount(Date.now())).toBe(2); // grows as paused entries come due

  h.switches.resume('coupon');
  await jest.advanceTimersByTimeAsync(0);
  expect(h.calls.filter((c) => c.entity === 'coupon')).toEqual([{ entity: 'coupon', ids: ['c1', 'c2'], at: T0 + 10_150 }]);
  expect(h.done).toEqual(['o1', 'o2', 'c1', 'c2']);
  expect(h.sink.dueCount(Date.now())).toBe(0);
});

test('a pause lands on entries already waiting for their time; entries not yet due on resume still wait for it', async () => {
  const h = harness();
  h.take('coupon', 'c1', T0 + 1_000);
  h.take('coupon', 'c2', T0 + 5_000);
  await jest.advanceTimersByTimeAsync(500);
  h.switches.pause('coupon');
  await jest.advanceTimersByTimeAsync(2_000);
  expect(h.calls).toEqual([]);
  h.switches.resume('coupon');
  await jest.advanceTimersByTimeAsync(0);
  expect(h.calls.map((c) => [c.ids, c.at - T0])).toEqual([[['c1'], 2_500]]);
  await jest.advanceTimersByTimeAsync(2_500);
  expect(h.calls.map((c) => [c.ids, c.at - T0])).toEqual([
    [['c1'], 2_500],
    [['c2'], 5_000],
  ]);
});

test('a paused entity does not make the sink spin: no timer fires for it', async () => {
  const h = harness();
  h.switches.pause('order');
  for (let i = 0; i < 50; i += 1) h.take('order', `o${i}`, T0 - 1_000);
  await jest.advanceTimersByTimeAsync(0);
  expect(jest.getTimerCount()).toBe(0);
  expect(h.calls).toEqual([]);
});

test('a throttle cuts batches to the tokens available: N a second, each second', async () => {
  const h = harness({ maxBatchSize: 100 });
  h.switches.throttle('coupon', 10);
  for (let i = 0; i < 35; i += 1) h.take('coupon', `c${i}`, T0);
  h.take('order', 'o1', T0); // not throttled
  await jest.advanceTimersByTimeAsync(0);
  expect(h.ids('order')).toEqual(['o1']);
  expect(h.ids('coupon')).toHaveLength(10); // the saved second's worth
  for (let s = 1; s <= 3; s += 1) {
    await jest.advanceTimersByTimeAsync(999);
    expect(h.ids('coupon')).toHaveLength(Math.min(35, 10 * s)); // nothing early
    await jest.advanceTimersByTimeAsync(1);
    expect(h.ids('coupon')).toHaveLength(Math.min(35, 10 * (s + 1)));
  }
  expect(h.calls.filter((c) => c.entity === 'coupon').map((c) => c.ids.length)).toEqual([10, 10, 10, 5]);
  expect(h.calls.filter((c) => c.entity === 'coupon').map((c) => c.at - T0)).toEqual([0, 1_000, 2_000, 3_000]);
});

test('lifting a throttle fires the rest at once; tightening it applies from the next batch', async () => {
  const h = harness({ maxBatchSize: 100 });
  h.switches.throttle('coupon', 5);
  for (let i = 0; i < 40; i += 1) h.take('coupon', `c${i}`, T0);
  await jest.advanceTimersByTimeAsync(0);
  expect(h.ids('coupon')).toHaveLength(5);
  h.switches.throttle('coupon', 1);
  await jest.advanceTimersByTimeAsync(2_000);
  expect(h.ids('coupon')).toHaveLength(7);
  h.switches.throttle('coupon', undefined);
  await jest.advanceTimersByTimeAsync(0);
  expect(h.ids('coupon')).toHaveLength(40);
  expect(h.done).toHaveLength(40);
});

test('pause and throttle together: nothing while paused, then the throttle paces the backlog', async () => {
  const h = harness();
  h.switches.pause('coupon');
  h.switches.throttle('coupon', 4);
  for (let i = 0; i < 12; i += 1) h.take('coupon', `c${i}`, T0);
  await jest.advanceTimersByTimeAsync(5_000);
  expect(h.calls).toEqual([]);
  h.switches.resume('coupon');
  await jest.advanceTimersByTimeAsync(0);
  expect(h.ids('coupon')).toHaveLength(4);
  await jest.advanceTimersByTimeAsync(2_000);
  expect(h.ids('coupon')).toHaveLength(12);
});

describe('with the hold consumer', () => {
  const topic = 'tbtest.due';
  /** Entity and id from the message key "entity:id"; every record released and due. */
  const reader: HeldRecordReader = (r) => {
    const [entity, id] = r.key!.toString().split(':') as [string, string];
    const transition = entity === 'coupon' ? 'expired' : 'cancelled';
    return {
      topic: r.topic,
      partition: r.partition,
      offset: r.offset,
      shard: 0,
      bucketStartMs: 0,
      releaseAtMs: 0,
      entry: { entity, transition, id, expireAtMs: T0 },
    };
  };
  const rec = (offset: number, key: string) => message(offset, { key: Buffer.from(key) });
  const lastCommit = (fake: ReturnType<typeof fakeConsumer>) =>
    fake.commits
      .flat()
      .map((c) => Number(c.offset))
      .reduce((a, b) => Math.max(a, b), -1);

  test('nothing is committed past a paused entry, the partition pauses at its memory cap, and resume drains and commits everything', async () => {
    const h = harness();
    const fake = fakeConsumer();
    const stage = new HoldConsumer({
      consumer: fake.consumer,
      group: 'g.expirer',
      topics: [topic],
      read: reader,
      sink: h.sink,
      reroute: { take: () => undefined, reset: () => undefined, dueCount: () => 0, close: () => undefined },
      dlq: { send: async () => undefined, sendAll: async () => undefined },
      clock,
      maxInMemoryPerPartition: 6,
      commitIntervalMs: 50,
      stallMs: 60_000,
      logger: createLogger('silent'),
    });
    await stage.start();
    fake.joinGroup({ [topic]: [0] });
    h.switches.pause('coupon');

    // o0 c1 o2 o3 c4 o5 …: the orders fire, the commit stops at the first coupon (offset 1).
    await fake.feed(topic, 0, [rec(0, 'order:0'), rec(1, 'coupon:1'), rec(2, 'order:2'), rec(3, 'order:3'), rec(4, 'coupon:4'), rec(5, 'order:5')]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.ids('order')).toEqual(['0', '2', '3', '5']);
    expect(lastCommit(fake)).toBe(1);
    expect(stage.stats().dueLag).toBe(2);

    // More coupons: the partition holds at most 6 unfinished, then stops reading (back-pressure).
    const more = await fake.feed(topic, 0, [6, 7, 8, 9, 10].map((o) => rec(o, `coupon:${o}`)).concat(rec(11, 'order:11')));
    expect(more.resolved).toEqual(['6', '7', '8', '9']);
    expect(fake.paused.has(`${topic}:0`)).toBe(true);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(lastCommit(fake)).toBe(1);
    expect(stage.stats().dueLag).toBe(6 + 2); // held in memory, plus the unread rest of the partition

    h.switches.resume('coupon');
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.ids('coupon')).toEqual(['1', '4', '6', '7', '8', '9']);
    expect(lastCommit(fake)).toBe(10);
    expect(fake.paused.has(`${topic}:0`)).toBe(false); // drained: reading resumes at offset 10
    await stage.stop();
  });
});
