/**
 * Reads the records of one ring bucket back from its topic, beside the live groups and without
 * touching them (kafka/scan-from-time.ts: a throwaway group, deleted at the end). The read window
 * and the stop rules are explained in bucket-window.ts; in short, per partition: from the
 * broker's time index at readFromMs, up to the high-water mark as it was at the start, stopping
 * early at the next lap (I1) or at a record stamped after readUntilMs.
 *
 * Records are checked as the live hold stages check them (core/held-record.ts); a record that
 * fails (the live stage sent it to the DLQ) or is misplaced (the live stage routed it again, to
 * the bucket it belongs to) is counted as invalid and skipped.
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import type { Clock } from '../core/clock';
import { BucketRecordInvalidError, CdcInvalidError } from '../core/errors';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { heldRecordReader, type HeldMessage, type HeldRecordReader } from '../core/held-record';
import type { Topology } from '../core/topology';
import { scanFromTime, scanGroupId, type RangeStop, type ScanRange } from '../kafka/scan-from-time';
import type { Logger } from '../ops/logger';
import type { BucketWindow } from './bucket-window';

const ENTRIES_PER_HEARTBEAT = 500;

/** Why reading a partition stopped. */
export type ScanStop = RangeStop | 'next-lap' | 'past-window' | 'first-found' | 'limit';

export type PartitionScan = ScanRange<ScanStop> & {
  /** The lowest offset holding a record of the bucket, if any. */
  firstOffset?: string;
  /** Records looked at. */
  records: number;
  /** Records of the bucket among them. */
  entries: number;
  /** Records unreadable or misplaced (skipped; the live stage dead-lettered or re-routed them). */
  invalid: number;
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
  /** Stop a partition at the first entry of the bucket this accepts (`explain` looking for one row's). */
  stopAt?: (entry: HeldMessage) => boolean;
  /** Stop a partition once this many records were looked at (a bounded look on production). */
  maxRecords?: number;
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
export const replayGroupId = scanGroupId;

export async function scanBucket(opts: BucketScanOptions): Promise<PartitionScan[]> {
  const { window } = opts;
  const reader = heldRecordReader(opts.topology, opts.catalogue);

  // A batch is always looked at whole up to its stop (it is only memory work): stopping
  // half-way would leave records handed on that were never looked at.
  const onBatch = async (scan: PartitionScan, messages: readonly KafkaMessage[], heartbeat: () => Promise<void>): Promise<ScanStop | undefined> => {
    const entries: HeldMessage[] = [];
    let stop: ScanStop | undefined;
    for (const m of messages) {
      const seen = lookAt(opts, reader, scan, m);
      if (typeof seen === 'string') {
        stop = seen;
        break;
      }
      if (seen === undefined) continue;
      scan.entries += 1;
      scan.firstOffset ??= m.offset;
      entries.push(seen);
      if (opts.firstOnly === true || opts.stopAt?.(seen) === true) {
        stop = 'first-found';
        break;
      }
    }
    // In slices, with a heartbeat between them: each slice may run an expiry transaction.
    for (let i = 0; i < entries.length; i += ENTRIES_PER_HEARTBEAT) {
      await opts.onEntries?.(scan.partition, entries.slice(i, i + ENTRIES_PER_HEARTBEAT));
      await heartbeat();
    }
    return stop;
  };

  return scanFromTime<ScanStop, PartitionScan>({
    kafka: opts.kafka,
    topic: window.topic,
    partitions: opts.partitions,
    readFromMs: window.readFromMs,
    groupId: opts.groupId,
    range: (r) => ({ ...r, records: 0, entries: 0, invalid: 0 }),
    onBatch,
    onPartitionDone: opts.onPartitionDone,
    joinTimeoutMs: opts.joinTimeoutMs,
    signal: opts.signal,
    what: 'the bucket scan',
    logger: opts.logger,
  });
}

/**
 * One record of the scan: the bucket's entry it holds, a reason to stop before it (the record
 * limit, past the window, the next lap), or undefined to pass over it (invalid, misplaced, or
 * the previous lap's tail). Counts it in `scan`.
 */
function lookAt(opts: BucketScanOptions, reader: HeldRecordReader, scan: PartitionScan, m: KafkaMessage): HeldMessage | ScanStop | undefined {
  const { window } = opts;
  if (opts.maxRecords !== undefined && scan.records >= opts.maxRecords) return 'limit';
  scan.records += 1;
  if (Number(m.timestamp) > window.readUntilMs) return 'past-window';
  let held: HeldMessage;
  try {
    held = reader({ topic: window.topic, partition: scan.partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers }, opts.clock.now());
  } catch (err) {
    if (!(err instanceof BucketRecordInvalidError || err instanceof CdcInvalidError)) throw err;
    scan.invalid += 1;
    return undefined;
  }
  if (held.misplaced !== undefined) {
    scan.invalid += 1;
    return undefined;
  }
  if (held.bucketStartMs < window.startMs) return undefined; // the previous lap's tail
  if (held.bucketStartMs > window.startMs) return 'next-lap';
  return held;
}
