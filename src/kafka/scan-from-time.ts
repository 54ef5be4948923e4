/**
 * Reads part of a topic back with a one-off consumer, beside the live groups and without
 * touching them: per partition from the broker's time index at `readFromMs` up to the
 * high-water mark as it was when the scan began, or until the caller's `onBatch` says the
 * partition is finished. Used to read one ring bucket again (replay/bucket-scan.ts) and to
 * find one record (kafka/find-record.ts).
 *
 * kafkajs has no assign(): the consumer joins a group of its own (`groupId`, e.g.
 * `<prefix>.replay.<random>`) whose offsets are set through the admin API before it subscribes
 * (partitions not asked for are set to their end, so nothing of them is read). It commits
 * nothing itself, and the group is deleted when the scan ends, failed, interrupted or not, and
 * before a forced exit (runtime/exit-guards.ts). (kafkajs's setOffsets runs a paused consumer of
 * the group until its first fetch: about 5 s, once; an abort during it is acted on after it.) A
 * rebalance of the scan's own group (a session lost during a long database retry) re-delivers
 * from the start offsets; records already handed on are skipped, so nothing is seen twice.
 */
import { randomBytes } from 'node:crypto';
import type { Admin, Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { InterruptedError, KafkaUnavailableError } from '../core/errors';
import type { Logger } from '../ops/logger';
import { guardExit } from '../runtime/exit-guards';

const SCAN_INTERRUPTED_HINT = 'its consumer group was deleted; run the command again to finish';

/** Why reading a partition stopped: nothing to read, its end reached, or the caller's reason. */
export type RangeStop = 'nothing-to-read' | 'high-water-mark';

export type ScanRange<S extends string = RangeStop> = {
  partition: number;
  /** First offset read (the time-index lookup of readFromMs). */
  fromOffset: string;
  /** The high-water mark when the scan began: nothing at or past it was read. */
  endOffset: string;
  stop?: RangeStop | S;
};

export type TimeScanOptions<S extends string, R extends ScanRange<S>> = Readonly<{
  kafka: Kafka;
  topic: string;
  /** Partitions to read (default: all of the topic). */
  partitions?: readonly number[];
  /** Nothing stamped before this is read (the broker's time index). */
  readFromMs: number;
  /** A group of the scan's own; it is created here and deleted at the end. */
  groupId: string;
  /** The caller's record of one partition's scan, made once the partition's range is known. */
  range: (scan: ScanRange<S>) => R;
  /**
   * The partition's next records, in offset order, none seen before and none at or past its end.
   * Returns why the partition is finished, or undefined to read on. May run database work: it
   * heartbeats as it goes.
   */
  onBatch: (range: R, messages: readonly KafkaMessage[], heartbeat: () => Promise<void>) => Promise<S | undefined>;
  /** A partition is finished: nothing more will come from it. */
  onPartitionDone?: (partition: number) => Promise<void>;
  /** How long joining the group may take before the scan gives up. */
  joinTimeoutMs?: number;
  /** An abort (Ctrl-C) ends the scan after the batch in hand; it rejects with InterruptedError. */
  signal?: AbortSignal;
  /** What the scan is, for errors ("the bucket scan"). */
  what: string;
  logger: Logger;
}>;

/** A group for a one-off reader: never one of the live groups, never reused. */
export function scanGroupId(groupPrefix: string): string {
  return `${groupPrefix}.replay.${randomBytes(6).toString('hex')}`;
}

export async function scanFromTime<S extends string, R extends ScanRange<S>>(opts: TimeScanOptions<S, R>): Promise<R[]> {
  const admin = opts.kafka.admin();
  await admin.connect();
  try {
    const { ranges, others } = await plan(admin, opts);
    const toRead = ranges.filter((s) => s.stop === undefined);
    for (const s of ranges.filter((x) => x.stop !== undefined)) await opts.onPartitionDone?.(s.partition);
    if (toRead.length === 0) return ranges;
    if (opts.signal?.aborted === true) throw new InterruptedError(opts.what, SCAN_INTERRUPTED_HINT);
    // Every partition of the topic gets a position: the group subscribes to the whole topic, and
    // one without a committed offset would be read from its start. Those not asked for start
    // at their end, so nothing of them is read.
    const positions = [...ranges.map((s) => ({ partition: s.partition, offset: s.stop === undefined ? s.fromOffset : s.endOffset })), ...others];
    // The group exists from setOffsets on; a forced exit (a second Ctrl-C) waits for its deletion.
    await guardExit(
      {
        what: `consumer group ${opts.groupId} is deleted`,
        byHand: `delete it by hand (kafka-consumer-groups.sh --bootstrap-server <brokers> --delete --group ${opts.groupId})`,
      },
      async () => {
        // setOffsets inside: a failure half-way through it can leave the group behind too.
        try {
          opts.logger.debug({ topic: opts.topic, group: opts.groupId }, `${opts.what}: setting the offsets of its consumer group`);
          // Not to be cut short (its consumer joins the group, fetches once, commits, leaves): a
          // Ctrl-C during it is seen once it returns, and the group is deleted.
          await admin.setOffsets({ groupId: opts.groupId, topic: opts.topic, partitions: positions });
          if (opts.signal?.aborted === true) throw new InterruptedError(opts.what, SCAN_INTERRUPTED_HINT);
          await read(opts, toRead);
        } finally {
          await deleteScanGroup(admin, opts);
        }
      },
    );
    return ranges;
  } finally {
    await admin.disconnect();
  }
}

/** The throwaway group goes, whatever ended the scan; one that was never created is no news. */
async function deleteScanGroup(admin: Admin, opts: Pick<TimeScanOptions<string, ScanRange<string>>, 'groupId' | 'logger'>): Promise<void> {
  await admin.deleteGroups([opts.groupId]).catch((err: unknown) => {
    const missing = (err as { groups?: Array<{ error?: { type?: string } }> }).groups?.every((g) => g.error?.type === 'GROUP_ID_NOT_FOUND') === true;
    if (!missing) opts.logger.warn({ err, group: opts.groupId }, 'could not delete the scan group; delete it by hand');
  });
}

/**
 * Per partition asked for: where reading starts and ends (one with nothing to read is finished);
 * and the others' ends, where the scan's group is set so that it reads nothing of them.
 */
async function plan<S extends string, R extends ScanRange<S>>(
  admin: Admin,
  opts: TimeScanOptions<S, R>,
): Promise<{ ranges: R[]; others: Array<{ partition: number; offset: string }> }> {
  const { topic } = opts;
  const ends = await admin.fetchTopicOffsets(topic);
  const fromTime = new Map((await admin.fetchTopicOffsetsByTimestamp(topic, opts.readFromMs)).map((p) => [p.partition, p.offset]));
  const known = new Set(ends.map((p) => p.partition));
  const unknown = (opts.partitions ?? []).filter((p) => !known.has(p));
  if (unknown.length > 0) throw new RangeError(`topic ${topic} has no partition ${unknown.join(', ')} (it has ${known.size})`);
  const wanted = new Set(opts.partitions ?? known);
  const others = ends.filter((p) => !wanted.has(p.partition)).map((p) => ({ partition: p.partition, offset: p.high }));
  const ranges = ends
    .filter((p) => wanted.has(p.partition))
    .sort((a, b) => a.partition - b.partition)
    .map((p) => {
      // The time index answers the high-water mark when no record is stamped that late; below
      // the log start when retention moved it, start there.
      const from = maxOffset(fromTime.get(p.partition) ?? p.high, p.low);
      const range = opts.range({ partition: p.partition, fromOffset: from, endOffset: p.high });
      if (BigInt(from) >= BigInt(p.high)) range.stop = 'nothing-to-read';
      return range;
    });
  return { ranges, others };
}

async function read<S extends string, R extends ScanRange<S>>(opts: TimeScanOptions<S, R>, toRead: R[]): Promise<void> {
  const { topic, logger } = opts;
  const byPartition = new Map(toRead.map((s) => [s.partition, { range: s, next: BigInt(s.fromOffset), end: BigInt(s.endOffset) }]));
  let open = toRead.length;
  const { finished, settle } = settlement();
  const consumer = scanConsumer(opts.kafka, opts.groupId);
  const joinTimer = failUnlessJoined(consumer, opts.groupId, opts.joinTimeoutMs ?? 60_000, settle.reject);
  consumer.on(consumer.events.CRASH, (e) => settle.reject(e.payload.error));
  const onAbort = () => settle.reject(new InterruptedError(opts.what, SCAN_INTERRUPTED_HINT));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  // An abort before the listener was added fires no event.
  if (opts.signal?.aborted === true) onAbort();

  const finish = async (partition: number, stop: RangeStop | S) => {
    const state = byPartition.get(partition);
    if (state === undefined || state.range.stop !== undefined) return;
    state.range.stop = stop;
    consumer.pause([{ topic, partitions: [partition] }]);
    logger.debug({ topic, scan: state.range as ScanRange<S> }, `${opts.what}: partition finished`);
    await opts.onPartitionDone?.(partition);
    open -= 1;
    if (open === 0) settle.resolve();
  };

  const eachBatch = async ({ batch, heartbeat }: EachBatchPayload) => {
    const state = byPartition.get(batch.partition);
    if (state === undefined || state.range.stop !== undefined) return;
    const { fresh, reachedEnd } = freshMessages(batch.messages, state.next, state.end);
    const last = fresh.at(-1);
    if (last !== undefined) state.next = BigInt(last.offset) + 1n;
    const stop = fresh.length > 0 ? await opts.onBatch(state.range, fresh, heartbeat) : undefined;
    if (stop !== undefined) await finish(batch.partition, stop);
    else if (reachedEnd || state.next >= state.end) await finish(batch.partition, 'high-water-mark');
    await heartbeat();
  };

  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async (payload) => {
        try {
          await eachBatch(payload);
        } catch (err) {
          // Settled here rather than thrown: kafkajs would retry the batch and hand it on twice.
          settle.reject(err);
          consumer.pause([{ topic }]);
        }
      },
    });
    await finished;
  } finally {
    clearTimeout(joinTimer);
    opts.signal?.removeEventListener('abort', onAbort);
    await consumer.disconnect();
  }
}

/** The scan's end: settled once, by the last partition finished or the first failure. */
function settlement(): { finished: Promise<void>; settle: { resolve: () => void; reject: (err: unknown) => void } } {
  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const finished = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited by the scan; marked handled now, so a failure while connecting is not an unhandled rejection.
  finished.catch(() => undefined);
  return { finished, settle };
}

/** The scan fails when its consumer has not joined its group within `timeoutMs`; the timer, cleared by the scan's end. */
function failUnlessJoined(consumer: Consumer, groupId: string, timeoutMs: number, fail: (err: unknown) => void): NodeJS.Timeout {
  const timer = setTimeout(
    () => fail(new KafkaUnavailableError(`the scan consumer did not join group ${groupId} within ${timeoutMs} ms`, { group: groupId })),
    timeoutMs,
  );
  consumer.on(consumer.events.GROUP_JOIN, () => clearTimeout(timer));
  return timer;
}

function scanConsumer(kafka: Kafka, groupId: string): Consumer {
  return kafka.consumer({
    groupId,
    maxWaitTimeInMs: 250,
    // A crash ends the scan: a restarted consumer would read from the start again.
    retry: { restartOnFailure: async () => false },
  });
}

/** The batch's records not handed on yet (a re-fetch repeats some) and before the range's end; whether the end was reached. */
function freshMessages(messages: readonly KafkaMessage[], next: bigint, end: bigint): { fresh: KafkaMessage[]; reachedEnd: boolean } {
  const fresh: KafkaMessage[] = [];
  for (const m of messages) {
    const offset = BigInt(m.offset);
    if (offset < next) continue;
    if (offset >= end) return { fresh, reachedEnd: true };
    fresh.push(m);
  }
  return { fresh, reachedEnd: false };
}

function maxOffset(a: string, b: string): string {
  return BigInt(a) >= BigInt(b) ? a : b;
}
