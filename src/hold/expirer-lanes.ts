/**
 * The expirer's waiting entries, in lanes: one FireQueue per entity and database, so that pausing
 * one entity (the operator's gate) or waiting on one database (its slots all busy) leaves the
 * other lanes alone. Which entries may fire now, and when the next one may.
 */
import { entityNames, entityOf, type EntityCatalogue, type Location, type Transition } from '../core/entity-catalogue';
import type { TransitionGate } from '../control/gate';
import type { Backlog } from '../core/pacer';
import { FireQueue } from './fire-queue';
import type { HeldMessage } from './hold-consumer';

/**
 * An entry taken and not yet done. `group`: the batch it joins (its transition and table), worked
 * out once at take. `alone`: after a deterministic failure the entry runs in a batch of its own.
 * Two counts, kept apart so that waiting never spends the budget for failing: `waits`, the
 * retriable failures it has waited out (its backoff grows with them), and `failuresAlone`, the
 * deterministic failures of its batch of its own (parked at the sink's maxAttempts).
 * `inFluxSince`: when its batch first failed on a missing table or column (a cut-over's moment).
 */
export type Pending = {
  msg: HeldMessage;
  transition: Transition;
  location: Location;
  group: string;
  done: () => void;
  waits: number;
  failuresAlone: number;
  inFluxSince?: number;
  alone: boolean;
};

/** The entries of one entity on one database: a paused entity's lanes wait, a full database's too. */
type Lane = Readonly<{ entity: string; database: string; budgetMs: number; queue: FireQueue<Pending> }>;

/**
 * Rows a database may take now, by its pacer (hold/database-pacing.ts): Infinity when unpaced.
 * `msUntilAllowed` as the gate's: 0 when a row may go, else how long until `wanted` may.
 * `batchLimit`: the most rows one fire sends it (Infinity when unpaced): a paced database gets
 * its rate in small batches often, not a second's worth at once.
 */
export type DatabasePace = Readonly<{
  allowance(database: string): number;
  msUntilAllowed(database: string, wanted: number): number;
  batchLimit(database: string): number;
}>;

const unpaced: DatabasePace = { allowance: () => Number.POSITIVE_INFINITY, msUntilAllowed: () => 0, batchLimit: () => Number.POSITIVE_INFINITY };

const laneKey = (entity: string, database: string) => `${entity}\u0000${database}`;

export class ExpirerLanes {
  /** The catalogue's entities, and the databases they live on. */
  readonly entities: readonly string[];
  readonly databases: readonly string[];
  private readonly lanes: Map<string, Lane>;

  constructor(catalogue: EntityCatalogue) {
    this.entities = entityNames(catalogue);
    this.lanes = new Map(
      this.entities.flatMap((e) =>
        entityOf(catalogue, e).databases.map(
          (database) =>
            [laneKey(e, database), { entity: e, database, budgetMs: entityOf(catalogue, e).latenessBudgetMs, queue: new FireQueue<Pending>() }] as const,
        ),
      ),
    );
    this.databases = [...new Set([...this.lanes.values()].map((l) => l.database))];
  }

  /** Entries waiting. */
  get size(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.size;
    return n;
  }

  /** Entries due at `now`, a paused entity's among them. */
  countDue(now: number): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.countDue(now);
    return n;
  }

  /**
   * The due entries waiting for `database`, and the oldest of them by the share of its entity's
   * budget already used (the pacer's floor). Counting walks the due part of each lane: about once a second.
   */
  backlogOf(database: string, now: number): Backlog {
    let dueRows = 0;
    let oldest: { at: number; budgetMs: number } | undefined;
    for (const lane of this.lanes.values()) {
      const head = lane.queue.peekAt();
      if (lane.database !== database || head === undefined || head > now) continue;
      dueRows += lane.queue.countDue(now);
      if (oldest === undefined || (now - head) / lane.budgetMs > (now - oldest.at) / oldest.budgetMs) oldest = { at: head, budgetMs: lane.budgetMs };
    }
    return oldest === undefined ? { dueRows } : { dueRows, oldestDueAtMs: oldest.at, budgetMs: oldest.budgetMs };
  }

  /** Queues `p` in its entity's lane on its database, to fire at `at`. */
  push(at: number, p: Pending): void {
    this.lanes.get(laneKey(p.transition.entity, p.location.database))!.queue.push(at, p);
  }

  /** Drops every waiting entry. */
  clear(): void {
    for (const lane of this.lanes.values()) lane.queue.retain(() => false);
  }

  /**
   * The earliest time something may fire: a paused entity never, a throttled one once it has
   * tokens for `maxBatchSize` rows, a database with every slot busy (`freeOn`) not until one of its
   * batches ends, a paced one once its pacer has tokens for `maxBatchSize` rows.
   */
  nextFireAt(now: number, gate: TransitionGate, freeOn: (database: string) => number, maxBatchSize: number, pace = unpaced): number | undefined {
    let next: number | undefined;
    for (const { entity, database, queue } of this.lanes.values()) {
      const head = queue.peekAt();
      if (head === undefined || gate.paused(entity) || freeOn(database) <= 0) continue;
      const at =
        head > now
          ? head
          : now + Math.max(gate.msUntilAllowed(entity, maxBatchSize), pace.msUntilAllowed(database, Math.min(maxBatchSize, pace.batchLimit(database))));
      next = next === undefined ? at : Math.min(next, at);
    }
    return next;
  }

  /**
   * Due entries, earliest first across the lanes as one queue would give them, skipping a
   * paused entity, taking no more of a throttled one than its tokens allow and no more for a
   * database than its free slots' batches (`free`: database → free slots) and its pacer's tokens
   * (the lower of the operator's throttle and the pacer wins; a paced database one small batch
   * per fire, its `batchLimit`). Taken a run at a
   * time: from the lane whose head is earliest, everything up to the next lane's head (or now)
   * in one pop, so a released hot minute of one entity costs one pass over the queues, not one
   * per entry.
   */
  popDue(now: number, free: ReadonlyMap<string, number>, gate: TransitionGate, maxBatchSize: number, pace = unpaced): Pending[] {
    const allowance = new Map(this.entities.map((e) => [e, gate.paused(e) ? 0 : gate.allowance(e)]));
    const room = new Map(
      [...free].map(([database, slots]) => [database, Math.min(slots * maxBatchSize, pace.batchLimit(database), Math.floor(pace.allowance(database)))]),
    );
    const out: Pending[] = [];
    for (;;) {
      let pick: Lane | undefined;
      let pickAt = Number.POSITIVE_INFINITY;
      let nextAt = Number.POSITIVE_INFINITY;
      for (const lane of this.lanes.values()) {
        const at = lane.queue.peekAt();
        if (at === undefined || at > now || allowance.get(lane.entity)! < 1 || (room.get(lane.database) ?? 0) < 1) continue;
        if (at < pickAt) {
          nextAt = pickAt;
          pick = lane;
          pickAt = at;
        } else if (at < nextAt) nextAt = at;
      }
      if (pick === undefined) break;
      const tokens = allowance.get(pick.entity)!;
      const left = room.get(pick.database)!;
      const taken = pick.queue.popDue(Math.min(now, nextAt), Math.min(left, Math.floor(tokens)));
      for (const p of taken) out.push(p);
      allowance.set(pick.entity, tokens - taken.length);
      room.set(pick.database, left - taken.length);
    }
    return out;
  }
}

/**
 * Batches of one transition on one table (its ref and location: one statement shape, one
 * database), capped in size, shards mixed: an entity with one table has every shard's rows in
 * it, so splitting by shard only made transactions smaller (with 16 shards a backlog averaged
 * ~218 rows per transaction instead of the batch size). Rows are locked in primary-key order
 * whatever the batch, so mixed batches cannot deadlock each other. An entry tried `alone` is a
 * batch of its own.
 */
export function batchesOf(due: Pending[], maxBatchSize: number): Pending[][] {
  const groups = new Map<string, Pending[]>();
  const alone: Pending[][] = [];
  for (const p of due) {
    if (p.alone) {
      alone.push([p]);
      continue;
    }
    const list = groups.get(p.group);
    if (list === undefined) groups.set(p.group, [p]);
    else list.push(p);
  }
  const batches: Pending[][] = alone;
  for (const list of groups.values()) {
    for (let i = 0; i < list.length; i += maxBatchSize) batches.push(list.slice(i, i + maxBatchSize));
  }
  return batches;
}
