/**
 * `explain`'s look at the wire, bounded for production (read-only; each look a throwaway group,
 * deleted; at most `maxRecords` records per partition read):
 *
 *   entry  a scheduled row's entry, in the ring partition the router puts it in now, then in
 *          each coarser tier's bucket that holds its due time (written when the row was further
 *          away, not yet cascaded); with whether the tier's reader has committed past it
 *   event  a transitioned row's latest event, on its event topic from its outbox row's time to
 *          each partition's end when the look began (no time bound: the connector may have
 *          published it hours later, after a stop)
 *
 * The due lane is not searched: it holds no bucket to bound the look.
 */
import type { Kafka } from 'kafkajs';
import type { Clock } from '../core/clock';
import type { Entity, EntityCatalogue, Transition } from '../core/entity-catalogue';
import type { EntrySearch, EventSearch, OutboxFact, Placement } from '../core/explain';
import { shardOfEntry } from '../core/router';
import { formatUtc } from '../core/utc-time';
import { bucketStartOf, horizonMs, partitionOfShard, type Topology } from '../core/topology';
import { findRecordByHeader } from '../kafka/find-record';
import { scanGroupId } from '../kafka/scan-from-time';
import type { Logger } from '../ops/logger';
import { bucketWindow, liveGroupOfTier, slackMs, type BucketWindow } from '../replay/bucket-window';
import { scanBucket } from '../replay/bucket-scan';

/** How many of the coarsest ring's parking buckets (entries beyond every horizon) are looked in. */
const PARKED_LOOKS = 3;

export type WireLook = Readonly<{
  entryOf: (entity: Entity, t: Transition, row: { id: string; at: string }, dueMs: number, placement: Placement, nowMs: number) => Promise<EntrySearch>;
  eventOf: (fact: OutboxFact) => Promise<EventSearch>;
}>;

export type WireLookOptions = Readonly<{
  kafka: Kafka;
  topology: Topology;
  catalogue: EntityCatalogue;
  groupPrefix: string;
  maxRecords: number;
  clock: Clock;
  logger: Logger;
  /** Ctrl-C: the look in hand ends, its throwaway group deleted (InterruptedError). */
  signal?: AbortSignal;
}>;

export function wireLook(opts: WireLookOptions): WireLook {
  return {
    entryOf: (entity, t, row, dueMs, placement, nowMs) => findEntry(opts, { entity, t, row, dueMs }, candidateWindows(opts.topology, dueMs, placement, nowMs)),
    eventOf: (fact) => findEvent(opts, fact),
  };
}

type WantedEntry = Readonly<{ entity: Entity; t: Transition; row: { id: string; at: string }; dueMs: number }>;

/** The entry in the first of `candidates` that holds it, and whether its tier's reader has committed past it. */
async function findEntry(opts: WireLookOptions, wanted: WantedEntry, candidates: { windows: BucketWindow[]; all: boolean }): Promise<EntrySearch> {
  const shard = shardOfEntry(wanted.entity, wanted.row, opts.topology.shards);
  let records = 0;
  let complete = candidates.all;
  const searched: string[] = [];
  for (const window of candidates.windows) {
    const partition = partitionOfShard(shard, window.tier.partitions);
    searched.push(`${window.topic} partition ${partition}`);
    const scan = await scanWindowFor(opts, wanted, window, partition);
    records += scan.records;
    if (scan.limited) complete = false;
    if (scan.offset !== undefined) {
      const consumed = await committedPast(opts, window, partition, scan.offset);
      return { found: { tier: window.tier.name, topic: window.topic, partition, offset: scan.offset, consumed }, records, complete, searched };
    }
  }
  return { found: null, records, complete, searched };
}

/** One bucket's partition read until the wanted entry (its offset) or the record limit. */
async function scanWindowFor(
  opts: WireLookOptions,
  { entity, t, row, dueMs }: WantedEntry,
  window: BucketWindow,
  partition: number,
): Promise<{ offset?: string; records: number; limited: boolean }> {
  let offset: string | undefined;
  const [scan] = await scanBucket({
    kafka: opts.kafka,
    topology: opts.topology,
    catalogue: opts.catalogue,
    window,
    groupId: scanGroupId(opts.groupPrefix),
    partitions: [partition],
    maxRecords: opts.maxRecords,
    stopAt: (held) => {
      const e = held.entry;
      const mine = e.entity === entity.name && e.transition === t.name && e.id === row.id && e.remind === undefined && e.expireAtMs === dueMs;
      if (mine) offset = held.offset;
      return mine;
    },
    clock: opts.clock,
    signal: opts.signal,
    logger: opts.logger,
  });
  return { offset, records: scan?.records ?? 0, limited: scan?.stop === 'limit' };
}

/**
 * The buckets the entry can be in, finest first: where a write goes now, then each coarser
 * tier's bucket holding its due time (written when the row was further away; released or
 * not: a cascader behind has not taken it yet). Then the coarsest ring's parking buckets: an
 * entry written while its due time lay beyond every horizon waits in the coarsest ring's last
 * writable bucket of its write time, before its due time's, and is parked again each time that
 * bucket is released, until its due time comes within the horizon. Of those, the latest
 * PARKED_LOOKS not yet released are looked in; `all` says whether that covered every one.
 */
function candidateWindows(topology: Topology, dueMs: number, placement: Placement, nowMs: number): { windows: BucketWindow[]; all: boolean } {
  const first = topology.tiers.findIndex((t) => t.name === placement.tier);
  const coarsestIndex = topology.tiers.length - 1;
  const coarsest = topology.tiers[coarsestIndex]!;
  const windows = [bucketWindow(topology, first, placement.bucketStartMs!)];
  for (let i = first + 1; i < topology.tiers.length; i += 1) windows.push(bucketWindow(topology, i, bucketStartOf(topology.tiers[i]!, dueMs)));
  const lastWritable = bucketStartOf(coarsest, nowMs) + horizonMs(coarsest) - coarsest.widthMs;
  let start = Math.min(bucketStartOf(coarsest, dueMs) - coarsest.widthMs, lastWritable);
  const looked = new Set(windows.filter((w) => w.tierIndex === coarsestIndex).map((w) => w.startMs));
  let parked = 0;
  for (; start - coarsest.leadMs > nowMs && parked < PARKED_LOOKS; start -= coarsest.widthMs) {
    if (looked.has(start)) continue;
    windows.push(bucketWindow(topology, coarsestIndex, start));
    parked += 1;
  }
  return { windows, all: start - coarsest.leadMs <= nowMs };
}

/** Whether the tier's live group has committed past `offset` in the partition (the entry is consumed). */
async function committedPast(opts: Pick<WireLookOptions, 'kafka' | 'groupPrefix'>, window: BucketWindow, partition: number, offset: string): Promise<boolean> {
  const admin = opts.kafka.admin();
  await admin.connect();
  try {
    const [topic] = await admin.fetchOffsets({ groupId: liveGroupOfTier(opts.groupPrefix, window.tierIndex), topics: [window.topic] });
    const committed = topic?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
    return BigInt(committed) > BigInt(offset);
  } finally {
    await admin.disconnect();
  }
}

/**
 * A transitioned row's latest event, on its topic from its outbox row's time to each partition's
 * end when the look began: a record is stamped when the connector sends it, which after a stop
 * of the connector is any time later, so no timestamp ends the look; --scan-limit does.
 */
async function findEvent(opts: WireLookOptions, fact: OutboxFact): Promise<EventSearch> {
  // The outbox row is stamped by the database clock, which may run ahead of the broker's by up
  // to the I1 slack.
  const fromMs = fact.createdAtMs - slackMs(opts.topology);
  const search = await findRecordByHeader({
    kafka: opts.kafka,
    topic: fact.topic,
    header: 'event_key',
    value: fact.eventKey,
    fromMs,
    maxRecords: opts.maxRecords,
    groupId: scanGroupId(opts.groupPrefix),
    signal: opts.signal,
    logger: opts.logger,
  });
  const found = search.found === null ? null : { topic: search.found.topic, partition: search.found.partition, offset: search.found.offset };
  const limited = search.partitions.filter((p) => p.stop === 'limit').map((p) => p.partition);
  const n = search.partitions.length;
  const searched = `${fact.topic} (${n} partition${n === 1 ? '' : 's'}) from ${formatUtc(fromMs)} to its end when the look began`;
  const cutShort =
    limited.length === 0 ? undefined : `the look's limit of ${opts.maxRecords} records (--scan-limit) reached in partition ${limited.join(', ')}`;
  return { found, records: search.records, complete: cutShort === undefined, searched, ...(cutShort !== undefined && { cutShort }) };
}
