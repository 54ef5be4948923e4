/**
 * Moves a live hold group's committed offsets on a bucket's ring topic back to the bucket's
 * first record in each partition, so that the live stage itself re-reads the bucket (and
 * everything after it: re-reading finished work is harmless, the expiry is idempotent).
 *
 * The group: the expirer's for the finest tier, the cascader's for a coarser one (the group that
 * consumes that ring). Committed offsets can only be set while the group has no members (a live
 * member would overwrite them with its own position at its next commit), so it refuses while it
 * has any: stop (scale to zero) that stage first, reset, start it again.
 *
 * The first record: the lowest offset holding a record of the bucket, found by the same bounded
 * scan as a replay (bucket-scan.ts), stopping at the first match. A partition without one is
 * left alone and reported. Offsets only ever move back: a partition whose committed offset is at
 * or before the bucket's first record has yet to read the bucket, and moving it forward would
 * skip unread records (I3); with no committed offset the stage starts from the log's beginning,
 * also before the bucket. Both are left alone and reported.
 *
 * The offsets are read back after they are set: kafkajs's setOffsets commits them through a
 * temporary member of the group and silently skips the partitions that member is not assigned,
 * so a reset counts as applied only for the partitions that read back at their target; the
 * others are reported (`unmoved`) and the command says to run it again.
 */
import type { Admin, Kafka } from 'kafkajs';
import type { Clock } from '../core/clock';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { Topology } from '../core/topology';
import type { Logger } from '../ops/logger';
import { replayGroupId, scanBucket, type PartitionScan } from './bucket-scan';
import { liveGroupOfTier, type BucketWindow } from './bucket-window';

export type OffsetsResetOptions = Readonly<{
  kafka: Kafka;
  topology: Topology;
  /** To read the bucket's entries as the live stage reads them. */
  catalogue: EntityCatalogue;
  groupPrefix: string;
  window: BucketWindow;
  dryRun: boolean;
  clock: Clock;
  logger: Logger;
  /** Ctrl-C: the scan stops and its group is deleted; nothing has been reset then. */
  signal?: AbortSignal;
}>;

export type PartitionReset = Readonly<{
  partition: number;
  /** The group's committed offset before the reset ('-1': none). */
  committed: string;
  /** The bucket's first record in the partition, if it holds one. */
  first?: string;
  /** The new offset (= first) when the partition is moved; undefined when it is left alone. */
  target?: string;
  scan: PartitionScan;
}>;

/** Move back to the bucket's first record only if the group has read past it. */
export function resetTarget(committed: string, first: string | undefined): string | undefined {
  if (first === undefined || BigInt(committed) < 0n) return undefined;
  return BigInt(committed) > BigInt(first) ? first : undefined;
}

export type OffsetsResetResult = Readonly<{
  group: string;
  window: BucketWindow;
  /** Members of the group when it was looked at (client id @ host). */
  members: readonly string[];
  /** Refused: the group has members (never set in a dry run, which only reports them). */
  refused: boolean;
  /** Every partition to move read back at its target. */
  applied: boolean;
  partitions: readonly PartitionReset[];
  /** Partitions to move whose committed offset did not read back at the target (with what it read). */
  unmoved: ReadonlyArray<Readonly<{ partition: number; target: string; committed: string }>>;
}>;

export async function resetOffsetsToBucket(opts: OffsetsResetOptions): Promise<OffsetsResetResult> {
  const group = liveGroupOfTier(opts.groupPrefix, opts.window.tierIndex);
  const admin = opts.kafka.admin();
  await admin.connect();
  try {
    const before = await membersOf(admin, group);
    if (before.length > 0 && !opts.dryRun) return { group, window: opts.window, members: before, refused: true, applied: false, partitions: [], unmoved: [] };
    const scans = await scanBucket({
      kafka: opts.kafka,
      topology: opts.topology,
      catalogue: opts.catalogue,
      window: opts.window,
      groupId: replayGroupId(opts.groupPrefix),
      firstOnly: true,
      clock: opts.clock,
      logger: opts.logger,
      ...(opts.signal && { signal: opts.signal }),
    });
    const committed = await committedOffsets(admin, group, opts.window.topic);
    const partitions = scans.map((scan) => {
      const c = committed.get(scan.partition) ?? '-1';
      return { partition: scan.partition, committed: c, first: scan.firstOffset, target: resetTarget(c, scan.firstOffset), scan };
    });
    const moves = partitions.filter((p) => p.target !== undefined);
    if (opts.dryRun || moves.length === 0) return { group, window: opts.window, members: before, refused: false, applied: false, partitions, unmoved: [] };
    // Looked at again: a member may have joined during the scan. (A member joining after this
    // makes setOffsets fail: the broker refuses offsets from outside a group's generation.)
    const now = await membersOf(admin, group);
    if (now.length > 0) return { group, window: opts.window, members: now, refused: true, applied: false, partitions, unmoved: [] };
    await admin.setOffsets({ groupId: group, topic: opts.window.topic, partitions: moves.map((p) => ({ partition: p.partition, offset: p.target! })) });
    const readBack = await committedOffsets(admin, group, opts.window.topic);
    const unmoved = moves
      .map((p) => ({ partition: p.partition, target: p.target!, committed: readBack.get(p.partition) ?? '-1' }))
      .filter((p) => p.committed !== p.target);
    const offsets = moves.map((p) => ({ partition: p.partition, from: p.committed, to: p.target }));
    if (unmoved.length > 0)
      opts.logger.warn(
        { group, topic: opts.window.topic, offsets, unmoved },
        'group offsets reset only in part: some partitions did not read back at their target',
      );
    else opts.logger.info({ group, topic: opts.window.topic, offsets }, 'group offsets reset to the bucket');
    return { group, window: opts.window, members: [], refused: false, applied: unmoved.length === 0, partitions, unmoved };
  } finally {
    await admin.disconnect();
  }
}

async function membersOf(admin: Admin, group: string): Promise<string[]> {
  const { groups } = await admin.describeGroups([group]);
  return (groups[0]?.members ?? []).map((m) => `${m.clientId}@${m.clientHost}`);
}

async function committedOffsets(admin: Admin, group: string, topic: string): Promise<Map<number, string>> {
  const [entry] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  return new Map((entry?.partitions ?? []).map((p) => [p.partition, p.offset]));
}
