/**
 * The work ahead, from offsets alone. A ring topic holds one bucket at a time (the write window,
 * router.ts, invariant I1): at clock `now`, the tier's buckets from `guard` widths back to the
 * last one its horizon reaches are `ring` buckets in `ring` distinct topics. So the entries of a
 * ring topic its group has not consumed (end offset minus committed offset, per partition) are
 * the entries of the one bucket it holds, without reading a record.
 *
 *   released   the bucket's release time (start − the tier's lead) has come: its entries are
 *              due (expirer) or being re-routed (cascader) and not yet committed. Past buckets
 *              (position < 0) still holding entries are the due lag of a group behind.
 *   ahead      not yet released: the entries that will fall due in that bucket.
 *
 * An upper bound of the work: an entry whose row was paid or extended since it was written is
 * counted until the database finds it stale. The coarsest tier's last bucket also holds the
 * entries beyond every horizon (parked there by the router), which a count cannot tell apart:
 * `parksLater` marks it. Bucket records carry no entity in their key or headers, so the counts
 * cannot be split per entity without reading the records.
 *
 * Pure: the offsets come in as data.
 */
import { bucketStartOf, dueTopic, horizonMs, ringIndex, ringTopic, type Topology } from './topology';

/** One partition's offsets: the log's first and next offsets, and the group's committed offset (null: none). */
export type PartitionOffsets = Readonly<{ partition: number; low: number; high: number; committed: number | null }>;

export type ForecastBucket = Readonly<{
  /** Buckets from the current one: 0 the bucket `now` is in, 1 the next, −1 the one before. */
  position: number;
  bucketStartMs: number;
  releaseAtMs: number;
  topic: string;
  entries: number;
  state: 'released' | 'ahead';
  /** The coarsest tier's last writable bucket: it also holds the entries beyond every horizon. */
  parksLater: boolean;
}>;

export type TierForecast = Readonly<{ tier: string; widthMs: number; buckets: readonly ForecastBucket[] }>;

export type Forecast = Readonly<{
  atMs: number;
  /** The due lane's unconsumed entries: due now, not yet transitioned. */
  due: number;
  tiers: readonly TierForecast[];
}>;

/** Entries of `partitions` the group has not consumed: a partition it never committed counts from the log's start. */
export function unconsumed(partitions: readonly PartitionOffsets[]): number {
  return partitions.reduce((n, p) => n + Math.max(0, p.high - Math.max(p.low, p.committed ?? p.low)), 0);
}

/** Every topic a forecast reads, each ring topic once: the due lane and every tier's ring. */
export function forecastTopics(topology: Topology): string[] {
  const rings = topology.tiers.flatMap((tier) => Array.from({ length: tier.ring }, (_, i) => ringTopic(topology, tier, i)));
  return [dueTopic(topology), ...rings];
}

/** `pending(topic)`: the unconsumed entries of a topic by the group that reads it (unconsumed()). */
export function forecastOf(topology: Topology, nowMs: number, pending: (topic: string) => number): Forecast {
  const coarsest = topology.tiers.length - 1;
  const tiers = topology.tiers.map((tier, tierIndex): TierForecast => {
    const current = bucketStartOf(tier, nowMs);
    const ahead = horizonMs(tier) / tier.widthMs;
    const buckets: ForecastBucket[] = [];
    for (let position = -tier.guard; position < ahead; position += 1) {
      const bucketStartMs = current + position * tier.widthMs;
      const releaseAtMs = bucketStartMs - tier.leadMs;
      const topic = ringTopic(topology, tier, ringIndex(tier, bucketStartMs));
      buckets.push({
        position,
        bucketStartMs,
        releaseAtMs,
        topic,
        entries: pending(topic),
        state: releaseAtMs <= nowMs ? 'released' : 'ahead',
        parksLater: tierIndex === coarsest && position === ahead - 1,
      });
    }
    return { tier: tier.name, widthMs: tier.widthMs, buckets };
  });
  return { atMs: nowMs, due: pending(dueTopic(topology)), tiers };
}
