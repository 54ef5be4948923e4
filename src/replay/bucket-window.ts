/**
 * Which ring bucket an operator means (`--at`, `--tier`), and where in its ring topic its records
 * can be. Pure: no clock of its own, no I/O; used by `replay` and `offsets reset`.
 *
 * Where a bucket's records are. The router (core/router.ts) writes bucket T of a tier of width w
 * and horizon H = (ring − guard) × w only while the writer's clock c reads
 *
 *     T − H + w  ≤  c  <  T + w
 *
 * (the tier takes T once T − bucket(c) < H, the coarsest tier's clamp included, and an entry
 * whose time has come goes to the due lane instead; cascaded and re-sent records are ordinary
 * writes by the same rule). A record's Kafka timestamp is its producer's clock at the send, so,
 * allowing the clock-skew and append budget of the I1 proof (guard × width of the finest tier,
 * `slackMs`), every record of bucket T is stamped within
 *
 *     [readFromMs, readUntilMs] = [T − H + w − slack, T + w + slack].
 *
 * A ring topic keeps several laps (bucket T shares it with T ± k × ring × w), so a reader seeks
 * with the broker's time index to the first record stamped at or after readFromMs (everything
 * before it is stamped earlier, so cannot be bucket T's) and reads forward, stopping a partition
 * at the first of:
 *   - its high-water mark as it was when the read began (later appends are not this bucket's
 *     unless the bucket is still open, and a replay is of what was scheduled when it started);
 *   - a record of a later bucket (the next lap): by I1 nothing of bucket T can follow it;
 *   - a record stamped after readUntilMs (no writer was still writing T by then).
 * Records of earlier buckets (the previous lap's tail) are skipped.
 */
import { bucketStartOf, horizonMs, ringIndex, ringTopic, type Tier, type Topology } from '../core/topology';
import { groupIdOf, holdRoleOfTier } from '../roles';

export type BucketWindow = Readonly<{
  tierIndex: number;
  tier: Tier;
  startMs: number;
  /** Exclusive. */
  endMs: number;
  ringIndex: number;
  topic: string;
  /** No record of the bucket is stamped before this (lower bound for the time-index lookup). */
  readFromMs: number;
  /** No record of the bucket is stamped after this. */
  readUntilMs: number;
}>;

/** A tier by name (`minute`) or index (`0`, finest first); the finest when not given. */
export function resolveTier(topology: Topology, nameOrIndex?: string): number {
  if (nameOrIndex === undefined) return 0;
  const text = nameOrIndex.trim();
  const index = /^[0-9]+$/.test(text) ? Number(text) : topology.tiers.findIndex((t) => t.name === text);
  if (index < 0 || index >= topology.tiers.length) {
    const known = topology.tiers.map((t, i) => `${i}=${t.name}`).join(', ');
    throw new RangeError(`no tier ${JSON.stringify(nameOrIndex)} in topology ${topology.prefix} (tiers: ${known})`);
  }
  return index;
}

/** The clock-skew and append budget of the I1 proof: guard × width of the finest tier. */
export function slackMs(topology: Topology): number {
  const finest = topology.tiers[0]!;
  return finest.guard * finest.widthMs;
}

/** The bucket of tier `tierIndex` that contains `atMs`, its topic and its read window. */
export function bucketWindow(topology: Topology, tierIndex: number, atMs: number): BucketWindow {
  const tier = topology.tiers[tierIndex];
  if (tier === undefined) throw new RangeError(`no tier ${tierIndex}`);
  const startMs = bucketStartOf(tier, atMs);
  const endMs = startMs + tier.widthMs;
  const index = ringIndex(tier, startMs);
  const slack = slackMs(topology);
  return {
    tierIndex,
    tier,
    startMs,
    endMs,
    ringIndex: index,
    topic: ringTopic(topology, tier, index),
    readFromMs: startMs - horizonMs(tier) + tier.widthMs - slack,
    readUntilMs: endMs + slack,
  };
}

/**
 * Where the bucket stands at `nowMs`: `future` (not started: every entry of it is not yet due),
 * `open` (writers may still append to it: a replay sees what was there when it began), `closed`.
 */
export function bucketPhase(window: BucketWindow, nowMs: number): 'future' | 'open' | 'closed' {
  if (nowMs < window.startMs) return 'future';
  return nowMs <= window.readUntilMs ? 'open' : 'closed';
}

/**
 * The consumer group that holds a tier's rings in the live system: the expirer reads the finest
 * tier, the cascader every coarser one.
 */
export function liveGroupOfTier(groupPrefix: string, tierIndex: number): string {
  return groupIdOf(groupPrefix, holdRoleOfTier(tierIndex));
}
