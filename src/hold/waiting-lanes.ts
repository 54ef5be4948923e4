/**
 * Each database's waiting lane (core/topology.ts waitingTopic): where the expirer moves the due
 * entries of a database that is away (its breaker open, a statement past its deadline, a
 * connection refused: runtime/retry-policy.ts isDatabaseAway).
 *
 * Why: a hold partition carries every database's entries (a one-table entity spreads its ids over
 * every shard), and holds at most TB_MAX_IN_MEMORY_PER_PARTITION unfinished ones. Kept in memory,
 * a sick database's entries would fill every partition to that cap within minutes and stop the
 * healthy databases' entries behind them, and pin every commit point (a rebalance re-reads all
 * after it). Moved to their database's own lane, they leave the commit path of the partitions
 * they came from; the expirer reads the lane like the due lane, and there they wait in memory,
 * at the cap, holding only their own database's partitions until it answers (I3: nothing is
 * dropped; an entry is done on its first partition only once the lane has acknowledged it).
 * The transition is idempotent, so an entry written to the lane twice (a crash between the
 * append and the commit) is a no-op the second time.
 */
import { encodeBucketEntry } from '../core/bucket-entry-codec';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { partitionOfShard, waitingTopic, type Topology } from '../core/topology';
import type { GuardedProducer } from '../kafka/guarded-producer';
import type { Logger } from '../ops/logger';
import type { Pending } from './expirer-lanes';
import type { HeldMessage } from './hold-consumer';

/** `topicOf` names a database's lane; `send` appends entries to it (acknowledged when it resolves). */
export type WaitingLanes = Readonly<{
  topicOf: (database: string) => string;
  send: (msgs: readonly HeldMessage[], database: string) => Promise<void>;
}>;

/** The lanes written as the due lane is: key = shard, partition = shard mod its partitions, the entry encoded as it was written. */
export function waitingLanes(ctx: Readonly<{ topology: Topology; catalogue: EntityCatalogue; producer: GuardedProducer }>): WaitingLanes {
  const topicOf = (database: string) => waitingTopic(ctx.topology, database);
  return {
    topicOf,
    send: async (msgs, database) => {
      const messages = msgs.map((m) => ({
        key: String(m.shard),
        partition: partitionOfShard(m.shard, ctx.topology.due.partitions),
        value: encodeBucketEntry(m.entry, ctx.catalogue),
        headers: { tier: 'due', moved_from: `${m.topic}:${m.partition}:${m.offset}` },
      }));
      await ctx.producer.sendBatch({ acks: -1, topicMessages: [{ topic: topicOf(database), messages }] });
    },
  };
}

/** `announced`: databases whose move was logged since their last good batch (the sink clears it). */
export type WaitingLog = Readonly<{ logger: Logger; announced: Set<string>; onMoved: (entity: string, count: number) => void }>;

/**
 * Moves the batch's entries to their database's lane and marks them done, except those read from
 * that lane (they wait where they are). Returns the entries still to retry here: all of them when
 * the append fails.
 */
export async function moveToWaiting(waiting: WaitingLanes, entity: string, batch: Pending[], err: unknown, log: WaitingLog): Promise<Pending[]> {
  const database = batch[0]!.location.database;
  const lane = waiting.topicOf(database);
  const moving = batch.filter((p) => p.msg.topic !== lane);
  if (moving.length === 0) return batch;
  try {
    await waiting.send(
      moving.map((p) => p.msg),
      database,
    );
  } catch (sendErr) {
    log.logger.warn({ err: sendErr, entity, database, size: moving.length }, 'could not move entries to their waiting lane; they wait here');
    return batch;
  }
  // Said once per outage of a database (until one of its batches goes through), then quietly.
  const level = log.announced.has(database) ? 'debug' : 'warn';
  log.announced.add(database);
  log.logger[level](
    { err, entity, database, lane, size: moving.length },
    'database away: its due entries move to its waiting lane, and the partitions they came from go on',
  );
  log.onMoved(entity, moving.length);
  for (const p of moving) p.done();
  return batch.filter((p) => p.msg.topic === lane);
}
