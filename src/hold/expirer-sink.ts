/**
 * The expirer's side of holding: released entries wait in a FireQueue until their own
 * expire_time, then go in batches of one entity and one shard through the expiry transaction.
 *
 *   transitioned / stale  → done (the offset may be committed)
 *   not yet due by the DB → back in the queue for the database's remaining time (I2)
 *   transaction failed    → back in the queue after a capped backoff; never dropped (I3)
 *
 * Concurrency is capped, so a hot minute queues here (bounded by the consumer's per-partition
 * cap) instead of opening unbounded transactions.
 */
import { Clock, timerDelay } from '../core/clock';
import type { EntityType } from '../core/bucket-entry';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { BatchOutcome } from '../expire/batch-outcome';
import { FireQueue } from './fire-queue';
import type { HeldMessage, HoldSink } from './hold-consumer';
import type { Logger } from '../ops/logger';

export type ExpireBatch = (entity: EntityType, entries: readonly ScheduledEntry[]) => Promise<BatchOutcome>;

export type ExpirerObserver = Partial<{
  batch(entity: EntityType, outcome: BatchOutcome): void;
  failed(entity: EntityType, err: unknown): void;
}>;

type Pending = { msg: HeldMessage; done: () => void; attempts: number };

export type ExpirerSinkOptions = Readonly<{
  expireBatch: ExpireBatch;
  clock: Clock;
  maxBatchSize: number;
  maxConcurrentBatches: number;
  maxBackoffMs: number;
  logger: Logger;
  observer?: ExpirerObserver;
}>;

export class ExpirerSink implements HoldSink {
  private readonly queue = new FireQueue<Pending>();
  private timer?: NodeJS.Timeout;
  private timerAt = Number.POSITIVE_INFINITY;
  private running = 0;
  private runningEntries = 0;
  private epoch = 0;
  private closed = false;

  constructor(private readonly opts: ExpirerSinkOptions) {}

  /** Entries waiting in memory (for metrics and tests). */
  get waiting(): number {
    return this.queue.size;
  }

  dueCount(now: number): number {
    return this.queue.countDue(now) + this.runningEntries;
  }

  take(msg: HeldMessage, done: () => void): void {
    this.queue.push(msg.entry.expireAtMs, { msg, done, attempts: 0 });
    this.schedule();
  }

  reset(): void {
    this.epoch += 1;
    this.queue.retain(() => false);
  }

  close(): void {
    this.closed = true;
    this.reset();
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.closed) return;
    const at = this.queue.peekAt();
    if (at === undefined || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.fire();
    }, timerDelay(at, this.opts.clock.now()));
  }

  private fire(): void {
    const free = this.opts.maxConcurrentBatches - this.running;
    if (free > 0) {
      const now = this.opts.clock.now();
      const batches = this.group(this.queue.popDue(now, free * this.opts.maxBatchSize));
      // Entries of several shards can make more batches than free slots: the rest wait.
      for (const batch of batches.slice(0, free)) void this.run(batch);
      for (const p of batches.slice(free).flat()) this.queue.push(now, p);
    }
    // With every slot busy, the next run() completion fires again.
    if (this.running < this.opts.maxConcurrentBatches) this.schedule();
  }

  /** One batch per entity and shard (one batch touches one shard's rows), capped in size. */
  private group(due: Pending[]): Pending[][] {
    const groups = new Map<string, Pending[]>();
    for (const p of due) {
      const key = `${p.msg.entry.entity}:${p.msg.shard}`;
      const list = groups.get(key) ?? [];
      list.push(p);
      groups.set(key, list);
    }
    const batches: Pending[][] = [];
    for (const list of groups.values()) {
      for (let i = 0; i < list.length; i += this.opts.maxBatchSize) batches.push(list.slice(i, i + this.opts.maxBatchSize));
    }
    return batches;
  }

  private async run(batch: Pending[]): Promise<void> {
    const epoch = this.epoch;
    const entity = batch[0]!.msg.entry.entity;
    this.running += 1;
    this.runningEntries += batch.length;
    try {
      const outcome = await this.opts.expireBatch(
        entity,
        batch.map((p) => ({ id: p.msg.entry.id, expireAtMs: p.msg.entry.expireAtMs })),
      );
      this.opts.observer?.batch?.(entity, outcome);
      const retry = new Map(outcome.notYetDue.map((n) => [n.entry.id, n.retryInMs]));
      const now = this.opts.clock.now();
      for (const p of batch) {
        const retryInMs = retry.get(p.msg.entry.id);
        if (retryInMs === undefined) p.done();
        else if (epoch === this.epoch) this.queue.push(now + retryInMs, p);
      }
    } catch (err) {
      this.opts.observer?.failed?.(entity, err);
      this.opts.logger.warn({ err, entity, size: batch.length }, 'expiry batch failed; will retry');
      if (epoch === this.epoch) {
        const now = this.opts.clock.now();
        for (const p of batch) {
          p.attempts += 1;
          this.queue.push(now + Math.min(this.opts.maxBackoffMs, 100 * 2 ** Math.min(p.attempts, 10)), p);
        }
      }
    } finally {
      this.running -= 1;
      this.runningEntries -= batch.length;
      this.fire();
    }
  }
}
