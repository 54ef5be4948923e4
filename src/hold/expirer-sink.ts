/**
 * The expirer's side of holding: released entries wait in a FireQueue until their own due
 * time, then go in batches of one transition (one entity, one SQL shape; shards mixed) through
 * the expiry transaction (expire/transition-batch.ts).
 *
 *   transitioned / stale  → done (the offset may be committed)
 *   not yet due by the DB → back in the queue for the database's remaining time (I2)
 *   retriable failure     → back in the queue after a jittered backoff, for as long as it
 *                           lasts (a database outage, a deadlock); never dropped (I3)
 *   missing table/column  → the same, for cutOverGraceMs (an online schema change's cut-over
 *                           makes the table missing for a moment); deterministic after that
 *   database away         → (its breaker open, a statement past its deadline, a connection
 *                           refused) the batch's entries move to their database's waiting lane
 *                           and are done here; those read from that lane wait here as above
 *   deterministic failure → each entry of the batch is tried again alone, so one bad row cannot
 *                           hold up the rest; an entry that fails alone `maxAttempts` times is
 *                           parked (DLQ with the reason, counted) and done: its partition's
 *                           commit point moves on instead of being pinned for good
 *
 * Concurrency is capped per database, so a hot minute queues here (bounded by the consumer's
 * per-partition cap) instead of opening unbounded transactions, and a database that stops
 * answering holds only its own slots: its batches wait on it (until their statements' deadline,
 * db/statement-deadline.ts, then its breaker) while another database's batches go on.
 *
 * The operator's switches (`timebucket ctl`, through the gate) are per entity, so each entity of
 * the catalogue waits in a queue of its own (all its transitions together): a paused entity's due
 * entries simply stay queued, unfinished, while the other entities fire. Unfinished means their
 * offsets are never committed past (OffsetTracker), the due-lag gauge counts them as they come
 * due, and once a partition reaches its in-memory cap the hold consumer stops reading it:
 * back-pressure, nothing lost. On resume everything due fires. A throttled entity sends no more
 * rows than its token bucket allows: batches are cut to the tokens available, and it waits for a
 * batch's worth of tokens rather than firing rows one at a time. Each database's pacer
 * (hold/database-pacing.ts, from its health and the lateness budgets) cuts its batches the same
 * way; the lower of the two wins. Neither ever reorders nor fires a row before its due time.
 *
 * The lanes (which entries may fire, and when) and the batching are hold/expirer-lanes.ts's; this
 * file runs the batches; what a failure means is hold/expirer-failures.ts's.
 */
import { batchKindOf } from '../core/bucket-entry';
import { Clock, timerDelay } from '../core/clock';
import { entityOf, locationOf, transitionOf, type EntityCatalogue, type Location, type Transition } from '../core/entity-catalogue';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { BatchOutcome } from '../expire/batch-outcome';
import type { Backoff } from '../runtime/retry-policy';
import { retryOrPark, type FailureContext } from './expirer-failures';
import { batchesOf, ExpirerLanes, type Pending } from './expirer-lanes';
import type { HeldMessage, HoldSink } from './hold-consumer';
import type { WaitingLanes, WaitingLog } from './waiting-lanes';
import type { Logger } from '../ops/logger';
import { openGate, TransitionGate } from '../control/gate';
import type { DatabasePacing } from './database-pacing';

/**
 * One batch of one transition (createTransitionBatches(…).run with the path bound), or of one
 * transition's reminders: every entry then carries `remind` (expire/reminder-batch.ts).
 */
export type ExpireBatch = (transition: Transition, entries: readonly ScheduledEntry[], location: Location) => Promise<BatchOutcome>;

/** `entity`: the entity's name, a bounded metric label (the catalogue's entities). */
export type ExpirerObserver = Partial<{
  batch(entity: string, outcome: BatchOutcome): void;
  failed(entity: string, err: unknown): void;
  parked(entity: string, err: unknown): void;
  movedToWaiting(entity: string, count: number): void;
}>;

/** Where an entry goes that keeps failing deterministically (the DLQ); it is done afterwards. */
export type Park = (msg: HeldMessage, err: unknown) => Promise<void>;

export type ExpirerSinkOptions = Readonly<{
  /** Its entities (one queue each) and transitions; entries were decoded against it. */
  catalogue: EntityCatalogue;
  expireBatch: ExpireBatch;
  clock: Clock;
  maxBatchSize: number;
  /** Batches running at once against each database. */
  maxConcurrentBatches: number;
  backoff: Backoff;
  /** Tries of an entry alone, after a deterministic failure, before it is parked (waits for a retriable failure do not count). */
  maxAttempts: number;
  /**
   * How long a batch failing on a missing table or unknown column (1146, 1054) is retried as a
   * whole before it is handled as deterministic: an online schema change's cut-over lasts a moment.
   */
  cutOverGraceMs: number;
  park: Park;
  /** For the backoff's jitter; tests make it exact. */
  random?: () => number;
  logger: Logger;
  observer?: ExpirerObserver;
  /** The operator's pause and throttle switches; none by default. */
  gate?: TransitionGate;
  /** Where due entries of a database that is away go (hold/waiting-lanes.ts; none: they wait here, in memory). */
  waiting?: WaitingLanes;
  /** Each database's pacer (hold/database-pacing.ts): rows go no faster than it allows; none: unpaced. */
  pacing?: DatabasePacing;
}>;

export class ExpirerSink implements HoldSink {
  /** One queue per entity and database, so pausing one entity or waiting on one database leaves the others alone. */
  private readonly lanes: ExpirerLanes;
  /** The batches running on each database. */
  private readonly running = new Map<string, number>();
  private readonly gate: TransitionGate;
  private readonly unsubscribe: () => void;
  private timer?: NodeJS.Timeout;
  private timerAt = Number.POSITIVE_INFINITY;
  private runningEntries = 0;
  private epoch = 0;
  private closed = false;
  private readonly transitions = new Map<string, Transition>();
  /** Logs a database's first move to its waiting lane since its last good batch (hold/waiting-lanes.ts). */
  private readonly waitingLog: WaitingLog;
  /** What retryOrPark needs of the sink (hold/expirer-failures.ts). */
  private readonly failures: FailureContext;

  constructor(private readonly opts: ExpirerSinkOptions) {
    this.lanes = new ExpirerLanes(opts.catalogue);
    this.gate = opts.gate ?? openGate;
    this.waitingLog = { logger: opts.logger, announced: new Set(), onMoved: (entity, n) => opts.observer?.movedToWaiting?.(entity, n) };
    this.failures = { opts, epoch: () => this.epoch, waitingLog: this.waitingLog, requeue: (at, p) => this.requeue(at, p) };
    // A resume or a new throttle can make work fireable that no timer waits for.
    const wake = () => {
      if (!this.closed) this.fire();
    };
    const unsubscribe = [this.gate.onChange(wake), opts.pacing?.attach({ backlogOf: (database, now) => this.lanes.backlogOf(database, now), wake })];
    this.unsubscribe = () => unsubscribe.forEach((u) => u?.());
  }

  /** Entries waiting in memory (for metrics and tests). */
  get waiting(): number {
    return this.lanes.size;
  }

  /** Paused entries count too: they are due and unfinished, which is what the gauge is for. */
  dueCount(now: number): number {
    return this.runningEntries + this.lanes.countDue(now);
  }

  /**
   * The entry's entity and transition were checked against the same catalogue when its record
   * was decoded (core/held-record.ts, I5), so an unknown one here is a bug: transitionOf throws.
   */
  take(msg: HeldMessage, done: () => void): void {
    const transition = this.transitionOf(msg.entry.entity, msg.entry.transition);
    const location = locationOf(entityOf(this.opts.catalogue, transition.entity), msg.entry.at);
    const at = msg.entry.expireAtMs;
    // A reminder batch is its own statement shape (expire/reminder-batch.ts): never mixed with the transition's.
    const group = `${transition.ref}~${batchKindOf(msg.entry)}@${location.key}`;
    this.lanes.push(at, { msg, transition, location, group, done, waits: 0, failuresAlone: 0, alone: false });
    // A timer due no later than this entry fires it, or reschedules from fire().
    if (at < this.timerAt) this.schedule();
  }

  /** transitionOf, memoised: take() runs once per entry. */
  private transitionOf(entity: string, name: string): Transition {
    const key = `${entity}\u0000${name}`;
    let t = this.transitions.get(key);
    if (t === undefined) {
      t = transitionOf(this.opts.catalogue, entity, name);
      this.transitions.set(key, t);
    }
    return t;
  }

  reset(): void {
    this.epoch += 1;
    this.lanes.clear();
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.reset();
    if (this.timer) clearTimeout(this.timer);
  }

  private requeue(at: number, p: Pending): void {
    this.lanes.push(at, p);
  }

  /** Slots free on `database`. */
  private freeOn(database: string): number {
    return this.opts.maxConcurrentBatches - (this.running.get(database) ?? 0);
  }

  private schedule(): void {
    if (this.closed) return;
    const at = this.nextFireAt();
    if (at === undefined || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.fire();
      },
      timerDelay(at, this.opts.clock.now()),
    );
  }

  /** The earliest time something may fire (ExpirerLanes.nextFireAt); run() fires when a batch ends. */
  private nextFireAt(): number | undefined {
    return this.lanes.nextFireAt(this.opts.clock.now(), this.gate, (database) => this.freeOn(database), this.opts.maxBatchSize, this.opts.pacing);
  }

  private fire(): void {
    const free = new Map<string, number>();
    for (const database of this.lanes.databases) {
      const slots = this.freeOn(database);
      if (slots > 0) free.set(database, slots);
    }
    if (free.size > 0) {
      const now = this.opts.clock.now();
      const batches = batchesOf(this.lanes.popDue(now, free, this.gate, this.opts.maxBatchSize, this.opts.pacing), this.opts.maxBatchSize);
      // Several entities or transitions (or entries tried alone) can make more batches than a database's free slots: the rest wait.
      const started: Pending[][] = [];
      for (const batch of batches) {
        const database = batch[0]!.location.database;
        const slots = free.get(database) ?? 0;
        if (slots > 0) {
          free.set(database, slots - 1);
          started.push(batch);
        } else for (const p of batch) this.requeue(now, p);
      }
      const taken = new Map<string, number>();
      for (const batch of started) taken.set(batch[0]!.transition.entity, (taken.get(batch[0]!.transition.entity) ?? 0) + batch.length);
      for (const entity of this.lanes.entities) this.gate.consume(entity, taken.get(entity) ?? 0);
      for (const batch of started) this.opts.pacing?.consume(batch[0]!.location.database, batch.length);
      for (const batch of started) void this.run(batch);
    }
    // A database with every slot busy fires again when one of its batches ends.
    this.schedule();
  }

  private async run(batch: Pending[]): Promise<void> {
    const epoch = this.epoch;
    const transition = batch[0]!.transition;
    const entity = transition.entity;
    const database = batch[0]!.location.database;
    this.running.set(database, (this.running.get(database) ?? 0) + 1);
    this.runningEntries += batch.length;
    const startedAt = this.opts.clock.now();
    try {
      const outcome = await this.opts.expireBatch(
        transition,
        batch.map((p) =>
          p.msg.entry.remind === undefined
            ? { id: p.msg.entry.id, expireAtMs: p.msg.entry.expireAtMs }
            : { id: p.msg.entry.id, expireAtMs: p.msg.entry.expireAtMs, remind: p.msg.entry.remind },
        ),
        batch[0]!.location,
      );
      this.opts.observer?.batch?.(entity, outcome);
      // Its commit latency, for the pacer's signal (core/pacer.ts): from the start to the commit.
      this.opts.pacing?.observeBatch(database, batch.length, this.opts.clock.now() - startedAt);
      this.waitingLog.announced.delete(database);
      const retry = new Map(outcome.notYetDue.map((n) => [n.entry.id, n.retryInMs]));
      const now = this.opts.clock.now();
      for (const p of batch) {
        const retryInMs = retry.get(p.msg.entry.id);
        if (retryInMs === undefined) p.done();
        else if (epoch === this.epoch) this.requeue(now + retryInMs, p);
      }
    } catch (err) {
      this.opts.observer?.failed?.(entity, err);
      if (epoch === this.epoch) await retryOrPark(this.failures, transition, batch, err);
    } finally {
      this.running.set(database, this.running.get(database)! - 1);
      this.runningEntries -= batch.length;
      this.fire();
    }
  }
}
