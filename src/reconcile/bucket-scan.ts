/**
 * Reads the records of one ring bucket back from its topic with a one-off consumer, beside the
 * live groups and without touching them. The read window and the stop rules are explained in
 * bucket-window.ts; in short, per partition: from the broker's time index at readFromMs, up to
 * the high-water mark as it was at the start, stopping early at the next lap (I1) or at a
 * record stamped after readUntilMs.
 *
 * kafkajs has no assign(): the consumer joins a group of its own (`groupId`, e.g.
 * `<prefix>.replay.<random>`) whose offsets are set through the admin API before it subscribes
 * (partitions not asked for are set to their end, so nothing of them is read). It commits
 * nothing itself, and the group is deleted when the scan ends, failed or not. (kafkajs's
 * setOffsets runs a paused consumer of the group until its first fetch: about 5 s, once.) A
 * rebalance of the scan's own group (a session lost during a long database retry) re-delivers
 * from the start offsets; records already seen are skipped, so nothing is counted twice.
 *
 * Records are checked as the live hold stages check them (core/held-record.ts); a record that
 * fails (the live stage sent it to the DLQ) or is misplaced (the live stage routed it again, to
 * the bucket it belongs to) is counted as invalid and skipped.
 */
import { randomBytes } from 'node:crypto';
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Clock } from '../core/clock';
import { BucketRecordInvalidError, CdcInvalidError, InterruptedError, KafkaUnavailableError } from '../core/errors';

const SCAN_INTERRUPTED_HINT = 'its consumer group was deleted; run the command again to finish';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { heldRecordReader, type HeldMessage } from '../core/held-record';
import type { Topology } from '../core/topology';
import type { Logger } from '../ops/logger';
import type { BucketWindow } from './bucket-window';

const ENTRIES_PER_HEARTBEAT = 500;

/** Why reading a partition stopped. */
export type ScanStop = 'nothing-to-read' | 'high-water-mark' | 'next-lap' | 'past-window' | 'first-found';

export type PartitionScan = {
  partition: number;
  /** First offset read (the time-index lookup of readFromMs). */
  fromOffset: string;
  /** The high-water mark when the scan began: nothing at or past it was read. */
  endOffset: string;
  /** The lowest offset holding a record of the bucket, if any. */
  firstOffset?: string;
  /** Records looked at. */
  records: number;
  /** Records of the bucket among them. */
  entries: number;
  /** Records unreadable or misplaced (skipped; the live stage dead-lettered or re-routed them). */
  invalid: number;
  stop?: ScanStop;
};

export type BucketScanOptions = Readonly<{
  kafka: Kafka;
  topology: Topology;
  /** Decodes the entries: one naming an entity or transition it does not hold is invalid. */
  catalogue: EntityCatalogue;
  window: BucketWindow;
  /** A group of the scan's own; it is created here and deleted at the end. */
  groupId: string;
  /** Partitions to read (default: all of the topic). */
  partitions?: readonly number[];
  /** Stop each partition at its first record of the bucket (where a reset would start). */
  firstOnly?: boolean;
  /** The bucket's records of one fetched batch, in offset order; awaited before reading on. */
  onEntries?: (partition: number, entries: readonly HeldMessage[]) => Promise<void>;
  /** A partition is finished: no more entries will come from it. */
  onPartitionDone?: (partition: number) => Promise<void>;
  clock: Clock;
  /** How long joining the group may take before the scan gives up. */
  joinTimeoutMs?: number;
  /**
   * An abort (the operator's Ctrl-C) ends the scan after the batch in hand: reading stops, the
   * throwaway group is deleted, and the scan rejects with InterruptedError.
   */
  signal?: AbortSignal;
  logger: Logger;
}>;

/** A group for a one-off reader: never one of the live groups, never reused. */
export function replayGroupId(groupPrefix: string): string {
  return `${groupPrefix}.replay.${randomBytes(6).toString('hex')}`;
}

export async function scanBucket(opts: BucketScanOptions): Promise<PartitionScan[]> {
  const { window } = opts;
  const admin = opts.kafka.admin();
  await admin.connect();
  try {
    const scans = await plan(admin, opts);
    const toRead = scans.filter((s) => s.stop === undefined);
    for (const s of scans.filter((x) => x.stop !== undefined)) await opts.onPartitionDone?.(s.partition);
    if (toRead.length === 0) return scans;
    if (opts.signal?.aborted === true) throw new InterruptedError('the bucket scan', SCAN_INTERRUPTED_HINT);
    // setOffsets inside: a failure half-way through it can leave the group behind too.
    try {
      await admin.setOffsets({ groupId: opts.groupId, topic: window.topic, partitions: scans.map((s) => ({ partition: s.partition, offset: s.stop === undefined ? s.fromOffset : s.endOffset })) });
      await read(opts, toRead);
    } finally {
      await deleteScanGroup(admin, opts);
    }
    return scans;
  } finally {
    await admin.disconnect();
  }
}

/** The throwaway group goes, whatever ended the scan; one that was never created is no news. */
async function deleteScanGroup(admin: Admin, opts: BucketScanOptions): Promise<void> {
  await admin.deleteGroups([opts.groupId]).catch((err: unknown) => {
    const missing = (err as { groups?: Array<{ error?: { type?: string } }> }).groups?.every((g) => g.error?.type === 'GROUP_ID_NOT_FOUND') === true;
    if (!missing) opts.logger.warn({ err, group: opts.groupId }, 'could not delete the scan group; delete it by hand');
  });
}

/** Per partition: where reading starts and ends; partitions with nothing to read are finished. */
async function plan(admin: Admin, opts: BucketScanOptions): Promise<PartitionScan[]> {
  const topic = opts.window.topic;
  const ends = await admin.fetchTopicOffsets(topic);
  const fromTime = new Map((await admin.fetchTopicOffsetsByTimestamp(topic, opts.window.readFromMs)).map((p) => [p.partition, p.offset]));
  const known = new Set(ends.map((p) => p.partition));
  const unknown = (opts.partitions ?? []).filter((p) => !known.has(p));
  if (unknown.length > 0) throw new RangeError(`topic ${topic} has no partition ${unknown.join(', ')} (it has ${known.size})`);
  const wanted = new Set(opts.partitions ?? known);
  return ends
    .filter((p) => wanted.has(p.partition))
    .sort((a, b) => a.partition - b.partition)
    .map((p) => {
      // The time index answers the high-water mark when no record is stamped that late; below
      // the log start when retention moved it (never, within the replay window) start there.
      const from = maxOffset(fromTime.get(p.partition) ?? p.high, p.low);
      const scan: PartitionScan = { partition: p.partition, fromOffset: from, endOffset: p.high, records: 0, entries: 0, invalid: 0 };
      if (BigInt(from) >= BigInt(p.high)) scan.stop = 'nothing-to-read';
      return scan;
    });
}

async function read(opts: BucketScanOptions, toRead: PartitionScan[]): Promise<void> {
  const { window, logger } = opts;
  const reader = heldRecordReader(opts.topology, opts.catalogue);
  const byPartition = new Map(toRead.map((s) => [s.partition, { scan: s, next: BigInt(s.fromOffset), end: BigInt(s.endOffset) }]));
  let open = toRead.length;
  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const finished = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited below; marked handled now, so a failure while connecting is not an unhandled rejection.
  finished.catch(() => undefined);

  const consumer: Consumer = opts.kafka.consumer({
    groupId: opts.groupId,
    maxWaitTimeInMs: 250,
    // A crash ends the scan: a restarted consumer would read from the start again and count twice.
    retry: { restartOnFailure: async () => false },
  });
  const joinTimer = setTimeout(() => settle.reject(new KafkaUnavailableError(`the scan consumer did not join group ${opts.groupId} within ${opts.joinTimeoutMs ?? 60_000} ms`, { group: opts.groupId })), opts.joinTimeoutMs ?? 60_000);
  consumer.on(consumer.events.GROUP_JOIN, () => clearTimeout(joinTimer));
  consumer.on(consumer.events.CRASH, (e) => settle.reject(e.payload.error));
  const onAbort = () => settle.reject(new InterruptedError('the bucket scan', SCAN_INTERRUPTED_HINT));
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const finish = async (partition: number, stop: ScanStop) => {
    const state = byPartition.get(partition);
    if (state === undefined || state.scan.stop !== undefined) return;
    state.scan.stop = stop;
    consumer.pause([{ topic: window.topic, partitions: [partition] }]);
    logger.debug({ topic: window.topic, ...state.scan }, 'bucket scan: partition finished');
    await opts.onPartitionDone?.(partition);
    open -= 1;
    if (open === 0) settle.resolve();
  };

  // A batch is always looked at whole (it is only memory work): stopping half-way would leave
  // records marked seen that were never handed on.
  const eachBatch = async ({ batch, heartbeat }: EachBatchPayload) => {
    const state = byPartition.get(batch.partition);
    if (state === undefined || state.scan.stop !== undefined) return;
    const { scan } = state;
    const entries: HeldMessage[] = [];
    let stop: ScanStop | undefined;
    for (const m of batch.messages) {
      const offset = BigInt(m.offset);
      if (offset < state.next) continue; // already seen (a re-fetch)
      if (offset >= state.end) {
        stop = 'high-water-mark';
        break;
      }
      state.next = offset + 1n;
      scan.records += 1;
      if (Number(m.timestamp) > window.readUntilMs) {
        stop = 'past-window';
        break;
      }
      let held: HeldMessage;
      try {
        held = reader({ topic: batch.topic, partition: batch.partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers }, opts.clock.now());
      } catch (err) {
        if (!(err instanceof BucketRecordInvalidError || err instanceof CdcInvalidError)) throw err;
        scan.invalid += 1;
        continue;
      }
      if (held.misplaced !== undefined) {
        scan.invalid += 1;
        continue;
      }
      if (held.bucketStartMs < window.startMs) continue; // the previous lap's tail
      if (held.bucketStartMs > window.startMs) {
        stop = 'next-lap';
        break;
      }
      scan.entries += 1;
      scan.firstOffset ??= m.offset;
      entries.push(held);
      if (opts.firstOnly) {
        stop = 'first-found';
        break;
      }
    }
    // In slices, with a heartbeat between them: each slice may run an expiry transaction.
    for (let i = 0; i < entries.length; i += ENTRIES_PER_HEARTBEAT) {
      await opts.onEntries?.(batch.partition, entries.slice(i, i + ENTRIES_PER_HEARTBEAT));
      await heartbeat();
    }
    if (stop === undefined && state.next >= state.end) stop = 'high-water-mark';
    if (stop !== undefined) await finish(batch.partition, stop);
    await heartbeat();
  };

  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [window.topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async (payload) => {
        try {
          await eachBatch(payload);
        } catch (err) {
          // Settled here rather than thrown: kafkajs would retry the batch and count it twice.
          settle.reject(err);
          consumer.pause([{ topic: window.topic }]);
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

function maxOffset(a: string, b: string): string {
  return BigInt(a) >= BigInt(b) ? a : b;
}
