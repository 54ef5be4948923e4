import { Writable } from 'node:stream';
import type { HeldMessage, HeldRecordReader } from '../../../src/core/held-record';
import { HoldConsumer, HoldConsumerOptions, HoldSink } from '../../../src/hold/hold-consumer';
import type { DlqRecord } from '../../../src/kafka/dlq-writer';
import { createLogger } from '../../../src/ops/logger';
import { fakeConsumer, message } from '../../support/fake-consumer';
import { waitFor } from '../../support/wait-for';

const topic = 'tbtest.minute.03';

class RecordingSink implements HoldSink {
  resets = 0;
  closes = 0;
  readonly taken = new Map<string, () => void>();
  take(msg: HeldMessage, done: () => void): void {
    this.taken.set(msg.offset, done);
  }
  reset(): void {
    this.resets += 1;
    this.taken.clear();
  }
  dueCount(): number {
    return this.taken.size;
  }

  close(): void {
    this.closes += 1;
    this.taken.clear();
  }
}

/** Release time from a header; a `bad` header makes the record invalid, a `misplaced` one misplaced. */
const reader: HeldRecordReader = (r) => {
  if (r.headers?.['bad'] !== undefined) throw new Error('bad record');
  const bucketStartMs = Number(r.headers?.['bucket_start'] ?? 0);
  const misplaced = r.headers?.['misplaced']?.toString();
  const held = {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset,
    shard: 0,
    bucketStartMs,
    releaseAtMs: Number(r.headers?.['release_at'] ?? 0),
    entry: { entity: 'coupon', transition: 'expired', id: r.offset, expireAtMs: bucketStartMs },
  };
  return misplaced === undefined ? held : { ...held, releaseAtMs: 0, misplaced };
};

const released = (offset: number) => message(offset, { headers: { release_at: '0' } });
const undue = (offset: number, inMs: number) => message(offset, { headers: { release_at: String(Date.now() + inMs) } });

async function started(opts: Partial<HoldConsumerOptions> = {}) {
  const fake = fakeConsumer();
  const sink = new RecordingSink();
  const reroute = new RecordingSink();
  const dlq: DlqRecord[] = [];
  const stage = new HoldConsumer({
    consumer: fake.consumer,
    group: 'g.expirer',
    topics: [topic],
    read: reader,
    sink,
    reroute,
    dlq: { send: async (r) => void dlq.push(r), sendAll: async (rs) => void dlq.push(...rs) },
    clock: { now: () => Date.now() },
    maxInMemoryPerPartition: 100,
    commitIntervalMs: 10,
    stallMs: 60_000,
    logger: createLogger('silent'),
    ...opts,
  });
  await stage.start();
  fake.joinGroup({ [topic]: [0] });
  return { fake, sink, reroute, dlq, stage };
}

const lastCommit = (fake: ReturnType<typeof fakeConsumer>) => fake.commits[fake.commits.length - 1]?.[0]?.offset;

test('an undue head pauses the partition without a seek and is resumed at its release time', async () => {
  const { fake, sink, stage } = await started();
  const seen = await fake.feed(topic, 0, [released(0), undue(1, 150), released(2)]);
  expect([...sink.taken.keys()]).toEqual(['0']);
  expect(seen.resolved).toEqual(['0']); // the held head stays unresolved: reading resumes at it
  expect(fake.paused.has(`${topic}:0`)).toBe(true);
  expect(fake.seeks).toEqual([]);
  expect(stage.stats().heldPartitions).toBe(1);
  await waitFor('the timer to resume the partition', () => (fake.paused.has(`${topic}:0`) ? undefined : true), { timeoutMs: 2_000, intervalMs: 10 });
  expect(stage.stats().heldPartitions).toBe(0);
  await stage.stop();
});

test('a misplaced record is re-routed at once, never held nor dead-lettered, and committed once its new record is written', async () => {
  const { fake, sink, reroute, dlq, stage } = await started();
  // Its header says an hour ahead; a held record would pause the partition for that hour.
  const misplaced = message(1, { headers: { release_at: String(Date.now() + 3_600_000), misplaced: 'ring index' } });
  const seen = await fake.feed(topic, 0, [released(0), misplaced, released(2)]);
  expect([...sink.taken.keys()]).toEqual(['0', '2']);
  expect([...reroute.taken.keys()]).toEqual(['1']);
  expect(seen.resolved).toEqual(['0', '1', '2']);
  expect(fake.paused.has(`${topic}:0`)).toBe(false);
  expect(dlq).toEqual([]);
  expect(stage.stats().dueLag).toBe(3);
  sink.taken.get('0')!();
  sink.taken.get('2')!();
  await waitFor('the prefix before the re-routed entry committed', () => (lastCommit(fake) === '1' ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  reroute.taken.get('1')!();
  await waitFor('everything committed once the entry is re-routed', () => (lastCommit(fake) === '3' ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  const resets = reroute.resets;
  fake.joinGroup({ [topic]: [0] });
  expect(reroute.resets).toBe(resets + 1);
  await stage.stop();
});

test('stop() closes both sinks, once, after the last commit: the consumer is their one owner', async () => {
  const { fake, sink, reroute, stage } = await started();
  await fake.feed(topic, 0, [released(0)]);
  sink.taken.get('0')!();
  expect([sink.closes, reroute.closes]).toEqual([0, 0]);
  await stage.stop();
  await stage.stop();
  expect([sink.closes, reroute.closes]).toEqual([1, 1]);
  expect(lastCommit(fake)).toBe('1');
});

test('only the contiguous finished prefix is committed, and a failed commit is sent again', async () => {
  const { fake, sink, stage } = await started();
  await fake.feed(topic, 0, [released(0), released(1), released(2)]);
  sink.taken.get('1')!();
  await new Promise((r) => setTimeout(r, 50));
  expect(fake.commits).toEqual([]);
  let failures = 1;
  fake.commitResult = async () => {
    if (failures-- > 0) throw new Error('coordinator moved');
  };
  sink.taken.get('0')!();
  await waitFor('the commit to go through after one failure', () => (lastCommit(fake) === '2' ? true : undefined), { timeoutMs: 2_000, intervalMs: 10 });
  expect(failures).toBe(-1);
  sink.taken.get('2')!();
  await waitFor('the rest to be committed', () => (lastCommit(fake) === '3' ? true : undefined), { timeoutMs: 2_000, intervalMs: 10 });
  await stage.stop();
});

test('a rejoin drops what was in memory, resumes every assigned partition, and ignores done() from before', async () => {
  const { fake, sink, stage } = await started();
  await fake.feed(topic, 0, [released(0), undue(1, 60_000)]);
  const before = sink.taken.get('0')!;
  fake.joinGroup({ [topic]: [0] });
  expect(sink.resets).toBe(2); // the first join, then this one
  expect(fake.paused.has(`${topic}:0`)).toBe(false);
  before();
  await new Promise((r) => setTimeout(r, 50));
  expect(fake.commits).toEqual([]); // a finished entry of the old generation is re-read, not committed
  await stage.stop();
});

test('the memory cap pauses a partition and resumes it once half has drained', async () => {
  const { fake, sink, stage } = await started({ maxInMemoryPerPartition: 4 });
  const seen = await fake.feed(topic, 0, [0, 1, 2, 3, 4, 5].map(released));
  expect([...sink.taken.keys()]).toEqual(['0', '1', '2', '3']);
  expect(seen.resolved).toEqual(['0', '1', '2', '3']);
  expect(fake.paused.has(`${topic}:0`)).toBe(true);
  expect(fake.seeks).toEqual([]);
  sink.taken.get('0')!();
  await new Promise((r) => setTimeout(r, 30));
  expect(fake.paused.has(`${topic}:0`)).toBe(true); // 3 in flight: above half the cap
  sink.taken.get('1')!();
  await waitFor('the partition to resume', () => (fake.paused.has(`${topic}:0`) ? undefined : true), { timeoutMs: 2_000, intervalMs: 10 });
  await stage.stop();
});

test('due lag keeps growing past the memory cap: the ends of capped partitions are read from the admin API', async () => {
  let end = 6;
  const { fake, stage } = await started({ maxInMemoryPerPartition: 4, fetchEnds: async () => [{ partition: 0, high: String(end) }], endsRefreshMs: 10 });
  await fake.feed(topic, 0, [0, 1, 2, 3, 4, 5].map(released));
  expect(fake.paused.has(`${topic}:0`)).toBe(true);
  // 4 due in memory + offsets 4 and 5 unread behind the cap.
  expect(stage.stats().dueLag).toBe(6);
  end = 1_006; // a thousand more arrive while the partition is not fetched
  await waitFor('due lag to count them', () => (stage.stats().dueLag === 1_006 ? true : undefined), { timeoutMs: 2_000, intervalMs: 10 });
  await stage.stop();
});

test('the tracked-offsets cap (10 × the memory cap) pauses behind an unfinished head', async () => {
  const { fake, sink, stage } = await started({ maxInMemoryPerPartition: 2 });
  await fake.feed(topic, 0, [released(0)]);
  // Offsets 1..19 finish at once; offset 0 never does, so all of them wait to be committed.
  for (let i = 1; i < 25; i += 1) {
    await fake.feed(topic, 0, [released(i)]);
    sink.taken.get(String(i))?.();
  }
  expect(sink.taken.size).toBe(20); // 0..19 taken, then the cap of 20 tracked offsets pauses it
  expect(fake.paused.has(`${topic}:0`)).toBe(true);
  await stage.stop();
});

test('a record the reader rejects goes to the DLQ and the partition moves on', async () => {
  const { fake, sink, dlq, stage } = await started();
  const seen = await fake.feed(topic, 0, [message(0, { headers: { bad: '1' } }), released(1)]);
  expect(dlq.map((r) => [r.topic, r.partition, r.message.offset, (r.error as Error).message])).toEqual([[topic, 0, '0', 'bad record']]);
  expect(seen.resolved).toEqual(['0', '1']);
  sink.taken.get('1')!();
  await waitFor('the commit to move past the bad record', () => (lastCommit(fake) === '2' ? true : undefined), { timeoutMs: 2_000, intervalMs: 10 });
  await stage.stop();
});

test("a dead-letter write that fails (the producer's breaker open) is retried: the partition waits, heartbeating, then the record is dead-lettered once and the partition moves on", async () => {
  const dlq: DlqRecord[] = [];
  let refusals = 3;
  const { fake, sink, stage } = await started({
    dlq: {
      send: async (r) => {
        if (refusals > 0) {
          refusals -= 1;
          throw Object.assign(new Error('Breaker is open'), { code: 'EOPENBREAKER' });
        }
        dlq.push(r);
      },
      sendAll: async (rs) => void dlq.push(...rs),
    },
    dlqRetry: { backoff: { baseMs: 1, maxMs: 5 }, deterministicAttempts: 3 },
  });
  const seen = await fake.feed(topic, 0, [message(0, { headers: { bad: '1' } }), released(1)]);
  expect(refusals).toBe(0);
  expect(dlq.map((r) => r.message.offset)).toEqual(['0']);
  expect(seen.resolved).toEqual(['0', '1']);
  expect(seen.heartbeats).toBeGreaterThanOrEqual(3);
  expect(stage.lifecycle).toBe('RUNNING');
  sink.taken.get('1')!();
  await waitFor('the commit to move past the dead-lettered record', () => (lastCommit(fake) === '2' ? true : undefined), { timeoutMs: 2_000, intervalMs: 10 });
  await stage.stop();
});

test('due lag after a rejoin counts from where reading restarts, not from offset 0', async () => {
  const { fake, stage } = await started();
  fake.joinGroup({ [topic]: [0] });
  await fake.feed(topic, 0, [undue(1_000, 100)], '1010');
  expect(stage.stats().dueLag).toBe(0); // held: nothing behind an undue head is due (I1)
  await waitFor('the hold to end', () => (stage.stats().heldPartitions === 0 ? true : undefined), { timeoutMs: 2_000, intervalMs: 10 });
  expect(stage.stats().dueLag).toBe(10);
  await stage.stop();
});

test("the expirer's early release: unread messages of a bucket not yet begun are not due lag, and are once it begins", async () => {
  let now = 1_000_000;
  const { fake, stage } = await started({ dueFrom: 'bucket', clock: { now: () => now } });
  // Released (release_at 0 is past), its bucket starts 5 s from now; 10 more messages unread behind it.
  await fake.feed(topic, 0, [message(0, { headers: { release_at: '0', bucket_start: String(now + 5_000) } })], '11');
  expect(stage.stats().heldPartitions).toBe(0);
  expect(stage.stats().dueLag).toBe(1); // the taken entry (the sink counts it), not the unread 10
  now += 5_000;
  expect(stage.stats().dueLag).toBe(11);
  await stage.stop();
});

test('a crash kafkajs will not restart fails the stage and its health', async () => {
  const { fake, stage } = await started();
  expect(stage.health()).toEqual({ ok: true });
  fake.emit('consumer.crash', { error: new Error('gone'), groupId: 'g.expirer', restart: false });
  const err = await stage.failed();
  expect(err.message).toBe('consumer of group g.expirer crashed and will not restart');
  expect(stage.lifecycle).toBe('FAILED');
  expect(stage.health()).toEqual({ ok: false, reason: 'g.expirer: FAILED' });
  await stage.stop();
});

test('stop() gives up on a commit and a group leave that never answer (a coordinator gone), names each, and every call returns the first one', async () => {
  const lines: string[] = [];
  const logger = createLogger('warn', {}, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
  const { fake, sink, reroute, stage } = await started({ stopDeadlineMs: 20, logger });
  await fake.feed(topic, 0, [released(0)]);
  sink.taken.get('0')!();
  fake.commitResult = () => new Promise<void>(() => undefined);
  fake.consumer.disconnect = () => new Promise<void>(() => undefined);
  const first = stage.stop();
  expect(stage.stop()).toBe(first);
  await first;
  expect(stage.lifecycle).toBe('STOPPED');
  expect([sink.closes, reroute.closes]).toEqual([1, 1]);
  const abandoned = lines.map((l) => JSON.parse(l) as { msg: string; step?: string }).filter((l) => l.msg.startsWith('stop: a step outlived its deadline'));
  expect(abandoned.map((l) => l.step)).toEqual(['last commit', 'leave the group']);
});
