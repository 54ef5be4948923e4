/**
 * Replays one ring bucket: reads exactly its entries back (bucket-scan.ts) and runs them through
 * the expirer's own batch transactions with path = 'replay', beside the live groups.
 *
 * Why it is safe to run at any time: the transaction is the live one (lock, NOW(3), guarded
 * UPDATE, INSERT IGNORE outbox), so an entry whose row already transitioned, was paid, used or
 * extended since, changes nothing; an entry not yet due by the database clock is left alone (I2;
 * the live expirer fires it on time); a transition it does make gets the same event_key the
 * stream would have used (I4). What a replay adds is for rows put back into their expirable
 * state without a binlog event, e.g. restored from a backup taken before they transitioned.
 *
 * Batches: one entity and one shard each (a shard's entries all come from one partition, so a
 * batch is flushed once its partition is done), at most `batchSize` entries, run as the scan
 * goes, so a hot bucket is never held in memory whole. A retriable failure (deadlock, lost
 * connection) is retried with backoff; anything else stops the replay with the error, and running
 * it again is harmless.
 *
 * `dryRun`: the same entries, classified against the rows read without locks (replay-classify.ts);
 * nothing is written.
 */
import type { Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import type { EntityType } from '../core/bucket-entry';
import type { Clock } from '../core/clock';
import type { ExpiryPath } from '../core/events';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { HeldMessage } from '../core/held-record';
import { Backoff, backoffMs, classifyFailure } from '../core/retry-policy';
import { partitionOfShard, type Topology } from '../core/topology';
import type { BatchOutcome } from '../expire/batch-outcome';
import { cancelOrderBatch } from '../expire/cancel-order-batch';
import { expireCouponBatch } from '../expire/expire-coupon-batch';
import type { Logger } from '../ops/logger';
import { replayGroupId, scanBucket, type PartitionScan } from './bucket-scan';
import { bucketPhase, type BucketWindow } from './bucket-window';
import { classifyBatch } from './replay-classify';
import { readEntryStates } from './sql/read-entry-states';

export type ExpireBatchFn = (db: Knex, entries: readonly ScheduledEntry[], path: ExpiryPath) => Promise<BatchOutcome>;

export type ReplayOptions = Readonly<{
  kafka: Kafka;
  db: Knex;
  topology: Topology;
  groupPrefix: string;
  window: BucketWindow;
  entity?: EntityType;
  shard?: number;
  dryRun: boolean;
  batchSize: number;
  clock: Clock;
  logger: Logger;
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
  /** Expirable but not yet due by the database clock: left to the live expirer. */
  notDue: number;
  /** Paid, used, locked, extended, transitioned for another time, or deleted since. */
  stale: number;
  /** Records of the topic that break their lane's rules (skipped). */
  invalid: number;
};

export type ReplaySummary = Readonly<{
  dryRun: boolean;
  window: BucketWindow;
  phase: ReturnType<typeof bucketPhase>;
  entity?: EntityType;
  shard?: number;
  partitions: readonly PartitionScan[];
  counts: Readonly<ReplayCounts>;
}>;

const TRANSACTIONS: Readonly<Record<EntityType, ExpireBatchFn>> = { coupon: expireCouponBatch, order: cancelOrderBatch };
/** Retriable failures: jittered backoff up to 5 s apart, then give up (the replay can be run again). */
const BACKOFF: Backoff = { baseMs: 100, maxMs: 5_000 };
const MAX_ATTEMPTS = 8;

export async function replayBucket(opts: ReplayOptions): Promise<ReplaySummary> {
  const { window } = opts;
  if (opts.shard !== undefined && !(Number.isSafeInteger(opts.shard) && opts.shard >= 0 && opts.shard < opts.topology.shards)) {
    throw new RangeError(`shard must be in [0, ${opts.topology.shards}), got ${opts.shard}`);
  }
  const counts: ReplayCounts = { entries: 0, transitioned: 0, due: 0, alreadyDone: 0, notDue: 0, stale: 0, invalid: 0 };
  // Pending batches per partition, entity and shard: a shard's entries are all in one partition.
  const pending = new Map<number, Map<string, { entity: EntityType; entries: ScheduledEntry[] }>>();
  const run = (entity: EntityType, entries: ScheduledEntry[]) => (opts.dryRun ? classifyOnly(opts, counts, entity, entries) : replay(opts, counts, entity, entries));

  const onEntries = async (partition: number, held: readonly HeldMessage[]) => {
    const lists = pending.get(partition) ?? new Map<string, { entity: EntityType; entries: ScheduledEntry[] }>();
    pending.set(partition, lists);
    for (const h of held) {
      if (opts.entity !== undefined && h.entry.entity !== opts.entity) continue;
      if (opts.shard !== undefined && h.shard !== opts.shard) continue;
      counts.entries += 1;
      const key = `${h.entry.entity}:${h.shard}`;
      const list = lists.get(key) ?? { entity: h.entry.entity, entries: [] };
      lists.set(key, list);
      list.entries.push({ id: h.entry.id, expireAtMs: h.entry.expireAtMs });
      if (list.entries.length >= opts.batchSize) await run(list.entity, list.entries.splice(0));
    }
  };
  const onPartitionDone = async (partition: number) => {
    for (const list of pending.get(partition)?.values() ?? []) if (list.entries.length > 0) await run(list.entity, list.entries.splice(0));
    pending.delete(partition);
  };

  const partitions = await scanBucket({
    kafka: opts.kafka,
    topology: opts.topology,
    window,
    groupId: replayGroupId(opts.groupPrefix),
    partitions: opts.shard === undefined ? undefined : [partitionOfShard(opts.shard, window.tier.partitions)],
    onEntries,
    onPartitionDone,
    clock: opts.clock,
    logger: opts.logger,
  });
  counts.invalid = partitions.reduce((n, p) => n + p.invalid, 0);
  const summary: ReplaySummary = { dryRun: opts.dryRun, window, phase: bucketPhase(window, opts.clock.now()), entity: opts.entity, shard: opts.shard, partitions, counts };
  opts.logger.info({ topic: window.topic, bucketStartMs: window.startMs, dryRun: opts.dryRun, ...counts }, 'bucket replay finished');
  return summary;
}

/** The live transaction with path = replay; its skipped entries told apart into done and stale. */
async function replay(opts: ReplayOptions, counts: ReplayCounts, entity: EntityType, entries: ScheduledEntry[]): Promise<void> {
  const outcome = await withRetry(opts.logger, `${entity} replay batch`, () => TRANSACTIONS[entity](opts.db, entries, 'replay'));
  counts.transitioned += outcome.transitioned.length;
  counts.notDue += outcome.notYetDue.length;
  if (outcome.stale.length > 0) {
    const states = await withRetry(opts.logger, `${entity} state read`, () => readEntryStates(opts.db, entity, outcome.stale.map((e) => e.id)));
    const split = classifyBatch(entity, outcome.stale, states);
    counts.alreadyDone += split.done;
    // The transaction's verdict stands: a row it skipped that reads expirable now changed since.
    counts.stale += split.stale + split.due + split.notDue;
  }
  if (outcome.transitioned.length > 0) opts.logger.info({ entity, ids: outcome.transitioned.map((t) => t.id) }, 'replay transitioned rows');
  opts.onProgress?.(counts);
}

async function classifyOnly(opts: ReplayOptions, counts: ReplayCounts, entity: EntityType, entries: ScheduledEntry[]): Promise<void> {
  const states = await withRetry(opts.logger, `${entity} state read`, () => readEntryStates(opts.db, entity, entries.map((e) => e.id)));
  const c = classifyBatch(entity, entries, states);
  counts.due += c.due;
  counts.notDue += c.notDue;
  counts.alreadyDone += c.done;
  counts.stale += c.stale;
  opts.onProgress?.(counts);
}

async function withRetry<T>(logger: Logger, what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (classifyFailure(err) !== 'retriable' || attempt >= MAX_ATTEMPTS) throw err;
      const waitMs = backoffMs(attempt, BACKOFF);
      logger.warn({ err, attempt, waitMs }, `${what} failed; will retry`);
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}
