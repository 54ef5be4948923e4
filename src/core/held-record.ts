/**
 * Reading a bucket record back: what a hold consumer may do with a message of a ring or of the
 * due lane, checked against what the writer (router.ts, bucket-record.ts) promises under THIS
 * process's topology and clock. Three outcomes:
 *
 *   in place    the record sits where the router would put it: held until its release.
 *   misplaced   the entry is readable but this topology or clock would not have put it here (a
 *               writer with another topology during a rollout, a shard count, ring size, width
 *               or tier changed under entries in flight, a writer clock far ahead): it is
 *               released at once and re-routed by this process's router (the hold consumer's
 *               `reroute` sink), never held (an entry held far beyond its bucket would pin the
 *               commit point, I5) and never dead-lettered (it is a good entry, I3).
 *   invalid     the entry cannot be read at all (not JSON, an entity or transition this
 *               catalogue does not know): BucketRecordInvalidError / CdcInvalidError, to the DLQ.
 *
 * Placement, with `now` the reader's clock and `skew` = guard × width of the finest tier
 * (the clock disagreement the I1 proof already budgets for):
 *   ring        bucket_start is an integer multiple of the tier width whose ring index is this
 *               topic's; the entry lies in that bucket (the coarsest tier also takes the entries
 *               clamped to its last writable bucket, which lie after it); the bucket starts at
 *               most horizon + skew after now (no writer's clock runs further ahead)
 *   due lane    the entry is due by now + skew (the writer thought it due)
 * The key and partition are NOT placement: a record whose key is not the entry's shard under
 * this topology (the shard count changed, or a spread entity's databases were reordered) is
 * held where it is, under the shard the entry has now. That is safe because I1 is a property
 * of the records in a partition, whichever shard mapping wrote them: every writer of a ring
 * with this width and size respects the same write window. Re-routing it instead would make
 * two processes with different shard counts bounce the entry between them during a rollout.
 *
 * Release: a ring record at bucket_start − lead; a due-lane or misplaced record at once.
 * Pure: no clock of its own, no I/O.
 */
import { BucketEntry } from './bucket-entry';
import { decodeBucketEntry } from './bucket-entry-codec';
import { entityOf, isSpread, type EntityCatalogue } from './entity-catalogue';
import { BucketRecordInvalidError } from './errors';
import { shardOfEntry } from './router';
import { horizonMs, parseTopic, ringIndex, Topology } from './topology';

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
  /** Why this topology would not have put the entry here: the consumer re-routes it at once. */
  misplaced?: string;
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
    const shard = entryShard(record.key, entry);

    if (lane.lane === 'due') {
      if (entry.expireAtMs > nowMs + skewMs) {
        return misplaced(record, shard, entry, `due-lane entry is ${entry.expireAtMs - nowMs} ms in the future (more than the ${skewMs} ms clock-skew budget)`);
      }
      return heldMessage(record, shard, entry, entry.expireAtMs, 0);
    }

    const tier = topology.tiers[lane.tierIndex]!;
    const bucketStartMs = readBucketStart(record.headers?.['bucket_start']);
    if (bucketStartMs === undefined) return misplaced(record, shard, entry, 'ring record without a bucket_start header in epoch milliseconds');
    const problem = ringPlacementProblem(topology, lane, bucketStartMs, entry.expireAtMs, nowMs, skewMs);
    if (problem !== undefined) return misplaced(record, shard, entry, problem);
    return heldMessage(record, shard, entry, bucketStartMs, bucketStartMs - tier.leadMs);
  };

  /**
   * The entry's shard under this topology. A spread entity's shard depends on the order of its
   * databases in the file, so any key shard in range stands (the entry's `at` says where its
   * row is); otherwise the shard is recomputed, whatever the key says.
   */
  function entryShard(key: RawRecord['key'], entry: BucketEntry): number {
    const entity = entityOf(catalogue, entry.entity);
    if (isSpread(entity)) {
      const keyed = key === null || key === undefined ? -1 : canonicalDecimal(key, 10);
      if (keyed >= 0 && keyed < topology.shards) return keyed;
    }
    return shardOfEntry(entity, entry, topology.shards);
  }
}

/**
 * Why a ring record's bucket is not where this topology would have put its entry: a start that
 * is not a bucket of the tier or not of this ring index, an entry time outside the bucket (the
 * coarsest tier's buckets also park entries beyond every horizon), or a bucket beyond the
 * horizon of a clock `skewMs` ahead of this one; undefined when it is.
 */
function ringPlacementProblem(
  topology: Topology,
  lane: { tierIndex: number; ringIndex: number },
  bucketStartMs: number,
  expireAtMs: number,
  nowMs: number,
  skewMs: number,
): string | undefined {
  const tier = topology.tiers[lane.tierIndex]!;
  if (bucketStartMs % tier.widthMs !== 0) return `bucket_start ${bucketStartMs} is not a multiple of the ${tier.name} width ${tier.widthMs}`;
  if (ringIndex(tier, bucketStartMs) !== lane.ringIndex)
    return `bucket_start ${bucketStartMs} belongs to ring index ${ringIndex(tier, bucketStartMs)}, not ${lane.ringIndex}`;
  const coarsest = lane.tierIndex === topology.tiers.length - 1;
  const bucketEnd = bucketStartMs + tier.widthMs;
  if (expireAtMs < bucketStartMs || (!coarsest && expireAtMs >= bucketEnd))
    return `entry time ${expireAtMs} lies outside its bucket [${bucketStartMs}, ${bucketEnd})`;
  if (bucketStartMs > nowMs + horizonMs(tier) + skewMs) {
    return `bucket ${bucketStartMs} is ${bucketStartMs - nowMs} ms ahead, beyond the ${tier.name} horizon plus the clock-skew budget`;
  }
  return undefined;
}

/** One object per record, built once (this runs for every entry the expirer reads). */
function heldMessage(record: RawRecord, shard: number, entry: BucketEntry, bucketStartMs: number, releaseAtMs: number): HeldMessage {
  return { topic: record.topic, partition: record.partition, offset: record.offset, shard, bucketStartMs, releaseAtMs, entry };
}

/** Released at once, to be re-routed: its bucket is its own time (due lag counts it as due). */
function misplaced(record: RawRecord, shard: number, entry: BucketEntry, reason: string): HeldMessage {
  return { ...heldMessage(record, shard, entry, entry.expireAtMs, 0), misplaced: reason };
}

/** The bucket_start header in epoch milliseconds, or undefined when missing or not such a number. */
function readBucketStart(header: Buffer | string | (Buffer | string)[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const n = value === undefined ? -1 : canonicalDecimal(value, 16);
  return n < 0 || !Number.isSafeInteger(n) ? undefined : n;
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

function invalid(reason: string): BucketRecordInvalidError {
  return new BucketRecordInvalidError(`bucket record: ${reason}`);
}
