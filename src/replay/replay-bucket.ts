/**
 * Replays one ring bucket: reads exactly its entries back (bucket-scan.ts) and runs them through
 * the expirer's own batch transactions with path = 'replay', beside the live groups.
 *
 * Why it is safe to run at any time: the transaction is the live one (lock, NOW(3), guarded
 * UPDATE, INSERT IGNORE outbox), so an entry whose row already transitioned, was paid, used or
 * extended since, changes nothing; an entry not yet due by the database clock is left alone (I2;
 * the live expirer fires it on time); a transition it does make gets the same event_key the
 * stream would have used (I4). What a replay adds is for rows put back into a from-state
 * without a binlog event, e.g. restored from a backup taken before they transitioned.
 *
 * Batches: one transition (of one entity) and one shard each (a shard's entries all come from
 * one partition, so a batch is flushed once its partition is done), at most `batchSize`
 * entries, run as the scan goes, so a hot bucket is never held in memory whole. A retriable
 * failure (deadlock, lost connection) is retried with backoff; anything else stops the replay
 * with the error, and running it again is harmless.
 *
 * `dryRun`: the same entries, classified against the rows read without locks (replay-classify.ts);
 * nothing is written.
 */
import type { Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import type { Clock } from '../core/clock';
import { entityOf, locationOf, transitionOf, type EntityCatalogue, type Location, type Transition } from '../core/entity-catalogue';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { HeldMessage } from '../core/held-record';
import { RetryPolicies } from '../runtime/retry-policy';
import { retry } from '../runtime/retry';
import { partitionOfShard, type Topology } from '../core/topology';
import type { Logger } from '../ops/logger';
import type { TransitionBatches } from '../expire/transition-batch';
import { isReminderBatch, type ReminderBatches } from '../expire/reminder-batch';
import { batchKindOf } from '../core/bucket-entry';
import { replayGroupId, scanBucket, type PartitionScan } from './bucket-scan';
import { bucketPhase, type BucketWindow } from './bucket-window';
import { classifyBatch } from './replay-classify';
import { entryStateReader, type EntryStateReader } from './sql/read-entry-states';

export type ReplayOptions = Readonly<{
  kafka: Kafka;
  /** A pool per database (config.databases): an entry's row is read on its location's. */
  dbs: Readonly<Record<string, Knex>>;
  catalogue: EntityCatalogue;
  /** The transitions' batch transactions (expire/transition-batch.ts), run with path = replay. */
  batches: TransitionBatches;
  /** The reminders' transactions (expire/reminder-batch.ts), run with path = replay: a reminder already sent is ignored by its event_key. */
  reminders: ReminderBatches;
  topology: Topology;
  groupPrefix: string;
  window: BucketWindow;
  /** Only entries of this entity (a name of the catalogue). */
  entity?: string;
  shard?: number;
  dryRun: boolean;
  batchSize: number;
  clock: Clock;
  logger: Logger;
  /** Ctrl-C: the scan stops after the batch in hand and its group is deleted (bucket-scan.ts). */
  signal?: AbortSignal;
  /** After every batch: the figures so far. */
  onProgress?: (counts: Readonly<ReplayCounts>) => void;
}>;

export type ReplayCounts = {
  /** Entries of the bucket (after the entity and shard filters); a duplicate record counts twice. */
  entries: number;
  /** Transitioned by this replay (always 0 in a dry run). */
  transitioned: number;
  /** Dry run: would transition now (always 0 in a real run). */
  due: number;
  /** Already transitioned for this due time: the event exists. */
  alreadyDone: number;
  /** In a from-state but not yet due by the database clock: left to the live expirer. */
  notDue: number;
  /** Moved on by the application, extended, transitioned for another time or by someone else, or deleted since. */
  stale: number;
  /** Reminder entries (docs/reminders.md) run again: each writes its event only if it was never written. */
  reminders: number;
  /** Records of the topic that break their lane's rules (skipped). */
  invalid: number;
};

export type ReplaySummary = Readonly<{
  dryRun: boolean;
  window: BucketWindow;
  phase: ReturnType<typeof bucketPhase>;
  entity?: string;
  shard?: number;
  partitions: readonly PartitionScan[];
  counts: Readonly<ReplayCounts>;
}>;

export async function replayBucket(opts: ReplayOptions): Promise<ReplaySummary> {
  const { window } = opts;
  checkScope(opts);
  const counts: ReplayCounts = { entries: 0, transitioned: 0, due: 0, alreadyDone: 0, notDue: 0, stale: 0, reminders: 0, invalid: 0 };
  const ctx: BatchContext = { opts, counts, readStates: cachedStateReaders(opts) };
  const { onEntries, onPartitionDone } = batchesByPartition(ctx);
  const partitions = await scanBucket({
    kafka: opts.kafka,
    topology: opts.topology,
    catalogue: opts.catalogue,
    window,
    groupId: replayGroupId(opts.groupPrefix),
    partitions: opts.shard === undefined ? undefined : [partitionOfShard(opts.shard, window.tier.partitions)],
    onEntries,
    onPartitionDone,
    clock: opts.clock,
    logger: opts.logger,
    ...(opts.signal && { signal: opts.signal }),
  });
  counts.invalid = partitions.reduce((n, p) => n + p.invalid, 0);
  const summary: ReplaySummary = {
    dryRun: opts.dryRun,
    window,
    phase: bucketPhase(window, opts.clock.now()),
    entity: opts.entity,
    shard: opts.shard,
    partitions,
    counts,
  };
  opts.logger.info({ topic: window.topic, bucketStartMs: window.startMs, dryRun: opts.dryRun, ...counts }, 'bucket replay finished');
  return summary;
}

/** A shard out of range or an entity the catalogue does not hold ends the replay before it reads. */
function checkScope(opts: ReplayOptions): void {
  if (opts.shard !== undefined && !(Number.isSafeInteger(opts.shard) && opts.shard >= 0 && opts.shard < opts.topology.shards)) {
    throw new RangeError(`shard must be in [0, ${opts.topology.shards}), got ${opts.shard}`);
  }
  if (opts.entity !== undefined) entityOf(opts.catalogue, opts.entity); // a name the catalogue does not hold throws here
}

/** The rows' state reader of each transition and table, made on first use. */
function cachedStateReaders(opts: ReplayOptions): BatchContext['readStates'] {
  const readers = new Map<string, EntryStateReader>();
  return (t, location, ids) => {
    const key = `${t.ref}@${location.key}`;
    let read = readers.get(key);
    if (read === undefined) readers.set(key, (read = entryStateReader(opts.dbs[location.database]!, entityOf(opts.catalogue, t.entity), t, location)));
    return read(ids);
  };
}

type Pending = { transition: Transition; location: Location; entries: ScheduledEntry[] };

/**
 * The scan's entries in batches per partition, transition, table and shard (a shard's entries are
 * all in one partition), each run once it is full or its partition is read to the end.
 */
function batchesByPartition(ctx: BatchContext): {
  onEntries: (partition: number, held: readonly HeldMessage[]) => Promise<void>;
  onPartitionDone: (partition: number) => Promise<void>;
} {
  const { opts } = ctx;
  const pending = new Map<number, Map<string, Pending>>();
  const run = (p: Pending, entries: ScheduledEntry[]) => {
    if (isReminderBatch(entries)) return replayReminders(ctx, p.transition, p.location, entries);
    return opts.dryRun ? classifyOnly(ctx, p.transition, p.location, entries) : replay(ctx, p.transition, p.location, entries);
  };
  const onEntries = async (partition: number, held: readonly HeldMessage[]) => {
    const lists = pending.get(partition) ?? new Map<string, Pending>();
    pending.set(partition, lists);
    for (const h of held) {
      if (opts.entity !== undefined && h.entry.entity !== opts.entity) continue;
      if (opts.shard !== undefined && h.shard !== opts.shard) continue;
      ctx.counts.entries += 1;
      // Reminders apart: their own transaction (one batch is all reminders or none).
      const key = `${h.entry.entity}.${h.entry.transition}~${batchKindOf(h.entry)}@${h.entry.at ?? ''}:${h.shard}`;
      let list = lists.get(key);
      // The reader decoded the entry against the catalogue: its transition and location exist.
      if (list === undefined) {
        const location = locationOf(entityOf(opts.catalogue, h.entry.entity), h.entry.at);
        lists.set(key, (list = { transition: transitionOf(opts.catalogue, h.entry.entity, h.entry.transition), location, entries: [] }));
      }
      list.entries.push(
        h.entry.remind === undefined
          ? { id: h.entry.id, expireAtMs: h.entry.expireAtMs }
          : { id: h.entry.id, expireAtMs: h.entry.expireAtMs, remind: h.entry.remind },
      );
      if (list.entries.length >= opts.batchSize) await run(list, list.entries.splice(0));
    }
  };
  const onPartitionDone = async (partition: number) => {
    for (const list of pending.get(partition)?.values() ?? []) if (list.entries.length > 0) await run(list, list.entries.splice(0));
    pending.delete(partition);
  };
  return { onEntries, onPartitionDone };
}

type BatchContext = Readonly<{
  opts: ReplayOptions;
  counts: ReplayCounts;
  readStates: (t: Transition, location: Location, ids: readonly string[]) => ReturnType<EntryStateReader>;
}>;

/** The live transaction with path = replay; its skipped entries told apart into done and stale. */
async function replay({ opts, counts, readStates }: BatchContext, t: Transition, location: Location, entries: ScheduledEntry[]): Promise<void> {
  const outcome = await withRetry(opts.logger, `${t.ref} replay batch`, () => opts.batches.run(t, entries, 'replay', location));
  counts.transitioned += outcome.transitioned.length;
  counts.notDue += outcome.notYetDue.length;
  if (outcome.stale.length > 0) {
    const states = await withRetry(opts.logger, `${t.ref} state read`, () =>
      readStates(
        t,
        location,
        outcome.stale.map((e) => e.id),
      ),
    );
    const split = classifyBatch(t, outcome.stale, states);
    counts.alreadyDone += split.done;
    // The transaction's verdict stands: a row it skipped that reads expirable now changed since.
    counts.stale += split.stale + split.due + split.notDue;
  }
  if (outcome.transitioned.length > 0)
    opts.logger.info({ entity: t.entity, transition: t.name, ids: outcome.transitioned.map((r) => r.id) }, 'replay transitioned rows');
  opts.onProgress?.(counts);
}

/** Reminders run again (not in a dry run): sent only if still due to be and never sent, by event_key. */
async function replayReminders({ opts, counts }: BatchContext, t: Transition, location: Location, entries: ScheduledEntry[]): Promise<void> {
  counts.reminders += entries.length;
  if (!opts.dryRun) await withRetry(opts.logger, `${t.ref} replay reminders`, () => opts.reminders.run(t, entries, 'replay', location));
  opts.onProgress?.(counts);
}

async function classifyOnly({ opts, counts, readStates }: BatchContext, t: Transition, location: Location, entries: ScheduledEntry[]): Promise<void> {
  const states = await withRetry(opts.logger, `${t.ref} state read`, () =>
    readStates(
      t,
      location,
      entries.map((e) => e.id),
    ),
  );
  const c = classifyBatch(t, entries, states);
  counts.due += c.due;
  counts.notDue += c.notDue;
  counts.alreadyDone += c.done;
  counts.stale += c.stale;
  opts.onProgress?.(counts);
}

/** Retriable failures: jittered backoff up to 5 s apart, then give up (the replay can be run again). */
function withRetry<T>(logger: Logger, what: string, fn: () => Promise<T>): Promise<T> {
  return retry(fn, { policy: RetryPolicies.replay, what, logger });
}
