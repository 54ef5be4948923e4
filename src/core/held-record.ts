/**
 * Reading a bucket record back: what a hold consumer may do with a message of a ring or of the
 * due lane, checked against everything the writer (router.ts, bucket-record.ts) promises. A
 * record that breaks a promise is rejected with BucketRecordInvalidError and goes to the DLQ:
 * trusting it could freeze a partition (an entry held in memory far beyond its bucket pins the
 * commit point, and the memory cap then pauses the partition for good), violating I5.
 *
 * Promises checked, with `now` the reader's clock and `skew` = guard × width of the finest tier
 * (the clock disagreement the I1 proof already budgets for):
 *   every lane  key = shard = shardOfEntry(entry) (for a spread entity: any shard, see below);
 *               partition = shard mod the lane's partitions
 *   ring        bucket_start is an integer multiple of the tier width whose ring index is this
 *               topic's; the entry lies in that bucket (the coarsest tier also takes the entries
 *               clamped to its last writable bucket, which lie after it); the bucket starts at
 *               most horizon + skew after now (no writer's clock runs further ahead)
 *   due lane    the entry is due by now + skew (the writer thought it due)
 *
 * Release: a ring record at bucket_start − lead; a due-lane record at once.
 * The entry itself is decoded against the catalogue: an entity or transition this process does
 * not know is CdcInvalidError, to the DLQ like any other broken promise (I5).
 * Pure: no clock of its own, no I/O.
 */
import { BucketEntry, decodeBucketEntry } from './bucket-entry';
import { entityOf, isSpread, type EntityCatalogue } from './entity-catalogue';
import { BucketRecordInvalidError } from './errors';
import { shardOfEntry } from './router';
import { horizonMs, parseTopic, partitionOfShard, ringIndex, Topology } from './topology';

/** A bucket record ready to hold: where it came from, its bucket and when it may be released. */
export type HeldMessage = Readonly<{
  topic: string;
  partition: number;
  offset: string;
  shard: number;
  /** The bucket's start (for the due lane: the entry's own time). */
  bucketStartMs: number;
  /** When the record may be handed on: bucket start − lead for a ring, 0 for the due lane. */
  releaseAtMs: number;
  entry: BucketEntry;
}>;

export type RawRecord = Readonly<{
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | string | null | undefined;
  value: Buffer | null;
  headers?: Readonly<Record<string, Buffer | string | (Buffer | string)[] | undefined>>;
}>;

export type HeldRecordReader = (record: RawRecord, nowMs: number) => HeldMessage;

export function heldRecordReader(topology: Topology, catalogue: EntityCatalogue): HeldRecordReader {
  const finest = topology.tiers[0]!;
  const skewMs = finest.guard * finest.widthMs;
  const lanes = new Map<string, ReturnType<typeof parseTopic> | null>();
  const laneOf = (topic: string) => {
    let lane = lanes.get(topic);
    if (lane === undefined) {
      lane = parseTopic(topology, topic) ?? null;
      lanes.set(topic, lane);
    }
    return lane ?? undefined;
  };

  return (record, nowMs) => {
    const lane = laneOf(record.topic);
    if (lane === undefined) throw invalid(`topic ${record.topic} is not a lane of topology ${topology.prefix}`);
    const entry = decodeBucketEntry(record.value, catalogue);
    const shard = readShard(record.key, topology.shards);
    // A spread entity's shard depends on the order of its databases in the file: a reordered or
    // added database must not turn every entry in flight into a dead letter. Any shard in range
    // is placed correctly by the checks below; the entry's `at` says where its row is.
    const entity = entityOf(catalogue, entry.entity);
    if (!isSpread(entity)) {
      const expected = shardOfEntry(entity, entry, topology.shards);
      if (shard !== expected) throw invalid(`key shard ${shard} is not the shard of ${entry.entity} ${entry.id} (${expected})`);
    }

    if (lane.lane === 'due') {
      checkPartition(record.partition, shard, topology.due.partitions);
      if (entry.expireAtMs > nowMs + skewMs) {
        throw invalid(`due-lane entry is ${entry.expireAtMs - nowMs} ms in the future (more than the ${skewMs} ms clock-skew budget)`);
      }
      return heldMessage(record, shard, entry, entry.expireAtMs, 0);
    }

    const tier = topology.tiers[lane.tierIndex]!;
    checkPartition(record.partition, shard, tier.partitions);
    const bucketStartMs = readBucketStart(record.headers?.['bucket_start']);
    if (bucketStartMs % tier.widthMs !== 0) throw invalid(`bucket_start ${bucketStartMs} is not a multiple of the ${tier.name} width ${tier.widthMs}`);
    if (ringIndex(tier, bucketStartMs) !== lane.ringIndex) {
      throw invalid(`bucket_start ${bucketStartMs} belongs to ring index ${ringIndex(tier, bucketStartMs)}, not ${lane.ringIndex}`);
    }
    const coarsest = lane.tierIndex === topology.tiers.length - 1;
    const bucketEnd = bucketStartMs + tier.widthMs;
    if (entry.expireAtMs < bucketStartMs || (!coarsest && entry.expireAtMs >= bucketEnd)) {
      throw invalid(`entry time ${entry.expireAtMs} lies outside its bucket [${bucketStartMs}, ${bucketEnd})`);
    }
    if (bucketStartMs > nowMs + horizonMs(tier) + skewMs) {
      throw invalid(`bucket ${bucketStartMs} is ${bucketStartMs - nowMs} ms ahead, beyond the ${tier.name} horizon plus the clock-skew budget`);
    }
    return heldMessage(record, shard, entry, bucketStartMs, bucketStartMs - tier.leadMs);
  };
}

/** One object per record, built once (this runs for every entry the expirer reads). */
function heldMessage(record: RawRecord, shard: number, entry: BucketEntry, bucketStartMs: number, releaseAtMs: number): HeldMessage {
  return { topic: record.topic, partition: record.partition, offset: record.offset, shard, bucketStartMs, releaseAtMs, entry };
}

function readShard(key: RawRecord['key'], shards: number): number {
  const n = key === null || key === undefined ? -1 : canonicalDecimal(key, 10);
  if (n < 0 || n >= shards) throw invalid(`key ${JSON.stringify(key?.toString() ?? '')} is not a shard in [0, ${shards})`);
  return n;
}

function readBucketStart(header: Buffer | string | (Buffer | string)[] | undefined): number {
  if (header === undefined) throw invalid('ring record without a bucket_start header');
  const value = Array.isArray(header) ? header[0] : header;
  const n = value === undefined ? -1 : canonicalDecimal(value, 16);
  if (n < 0 || !Number.isSafeInteger(n)) throw invalid(`bucket_start ${JSON.stringify(value?.toString() ?? '')} is not epoch milliseconds`);
  return n;
}

/**
 * The value of `text` (bytes or a string) if it is a canonical decimal (0, or no leading zero)
 * of at most `maxDigits` digits, else -1. Read byte by byte: a key and a header per record,
 * without a string or a regular expression each.
 */
function canonicalDecimal(text: Buffer | string, maxDigits: number): number {
  const length = text.length;
  if (length === 0 || length > maxDigits) return -1;
  const first = typeof text === 'string' ? text.charCodeAt(0) : text[0]!;
  if (length > 1 && first === 48) return -1;
  let n = 0;
  for (let i = 0; i < length; i += 1) {
    const c = typeof text === 'string' ? text.charCodeAt(i) : text[i]!;
    if (c < 48 || c > 57) return -1;
    n = n * 10 + (c - 48);
  }
  return n;
}

function checkPartition(partition: number, shard: number, partitions: number): void {
  const expected = partitionOfShard(shard, partitions);
  if (partition !== expected) throw invalid(`shard ${shard} belongs to partition ${expected}, found in ${partition}`);
}

function invalid(reason: string): BucketRecordInvalidError {
  return new BucketRecordInvalidError(`bucket record: ${reason}`);
}
