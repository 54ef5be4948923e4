/**
 * `explain`'s look at the wire, bounded for production (read-only; each look a throwaway group,
 * deleted; at most `maxRecords` records per partition read):
 *
 *   entry  a scheduled row's entry, in the ring partition the router puts it in now, then in
 *          each coarser tier's bucket that holds its due time (written when the row was further
 *          away, not yet cascaded); with whether the tier's reader has committed past it
 *   event  a transitioned row's latest event, on its event topic from its outbox row's time
 *
 * The due lane is not searched: it holds no bucket to bound the look.
 */
import type { Kafka } from 'kafkajs';
import type { Clock } from '../core/clock';
import type { Entity, EntityCatalogue, Transition } from '../core/entity-catalogue';
import type { EntrySearch, EventSearch, OutboxFact, Placement } from '../core/explain';
import { shardOfEntry } from '../core/router';
import { bucketStartOf, horizonMs, partitionOfShard, type Topology } from '../core/topology';
import { findRecordByHeader } from '../kafka/find-record';
import { scanGroupId } from '../kafka/scan-from-time';
import type { Logger } from '../ops/logger';
import { bucketWindow, liveGroupOfTier, slackMs, type BucketWindow } from '../replay/bucket-window';
import { scanBucket } from '../replay/bucket-scan';

/** How many of the coarsest ring's parking buckets (entries beyond every horizon) are looked in. */
const PARKED_LOOKS = 3;

/** How far after its outbox row an event is looked for: the outbox connector's lag, bounded. */
const EVENT_LOOK_AHEAD_MS = 3_600_000;

export type WireLook = Readonly<{
  entryOf: (entity: Entity, t: Transition, row: { id: string; at: string }, dueMs: number, placement: Placement, nowMs: number) => Promise<EntrySearch>;
  eventOf: (fact: OutboxFact) => Promise<EventSearch>;
}>;

export function wireLook(opts: {
  kafka: Kafka;
  topology: Topology;
  catalogue: EntityCatalogue;
  groupPrefix: string;
  maxRecords: number;
  clock: Clock;
  logger: Logger;
  /** Ctrl-C: the look in hand ends, its throwaway group deleted (InterruptedError). */
  signal?: AbortSignal;
}): WireLook {
  const { topology } = opts;

  /**
   * The buckets the entry can be in, finest first: where a write goes now, then each coarser
   * tier's bucket holding its due time (written when the row was further away; released or
   * not: a cascader behind has not taken it yet). Then the coarsest ring's parking buckets: an
   * entry written while its due time lay beyond every horizon waits in the coarsest ring's last
   * writable bucket of its write time, before its due time's, and is parked again each time that
   * bucket is released, until its due time comes within the horizon. Of those, the latest
   * PARKED_LOOKS not yet released are looked in; `all` says whether that covered every one.
   */
  const candidates = (dueMs: number, placement: Placement, nowMs: number): { windows: BucketWindow[]; all: boolean } => {
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
  };

  const committedPast = async (window: BucketWindow, partition: number, offset: string): Promise<boolean> => {
    const admin = opts.kafka.admin();
    await admin.connect();
    try {
      const [topic] = await admin.fetchOffsets({ groupId: liveGroupOfTier(opts.groupPrefix, window.tierIndex), topics: [window.topic] });
      const committed = topic?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
      return BigInt(committed) > BigInt(offset);
    } finally {
      await admin.disconnect();
    }
  };

  return {
    async entryOf(entity, t, row, dueMs, placement, nowMs) {
      const shard = shardOfEntry(entity, row, topology.shards);
      let records = 0;
      const { windows, all } = candidates(dueMs, placement, nowMs);
      let complete = all;
      const searched: string[] = [];
      for (const window of windows) {
        const partition = partitionOfShard(shard, window.tier.partitions);
        searched.push(`${window.topic} partition ${partition}`);
        let offset: string | undefined;
        const [scan] = await scanBucket({
          kafka: opts.kafka,
          topology,
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
        records += scan?.records ?? 0;
        if (scan?.stop === 'limit') complete = false;
        if (offset !== undefined) {
          return {
            found: { tier: window.tier.name, topic: window.topic, partition, offset, consumed: await committedPast(window, partition, offset) },
            records,
            complete,
            searched,
          };
        }
      }
      return { found: null, records, complete, searched };
    },

    async eventOf(fact) {
      // The broker stamps the event when the connector sends it; the outbox row is stamped by the
      // database clock, which may run ahead of the broker's by up to the I1 slack.
      const search = await findRecordByHeader({
        kafka: opts.kafka,
        topic: fact.topic,
        header: 'event_key',
        value: fact.eventKey,
        fromMs: fact.createdAtMs - slackMs(topology),
        untilMs: fact.createdAtMs + EVENT_LOOK_AHEAD_MS,
        maxRecords: opts.maxRecords,
        groupId: scanGroupId(opts.groupPrefix),
        signal: opts.signal,
        logger: opts.logger,
      });
      const found = search.found === null ? null : { topic: search.found.topic, partition: search.found.partition, offset: search.found.offset };
      return { found, records: search.records, complete: !search.stops.some((s) => s.endsWith(':limit')) };
    },
  };
}
