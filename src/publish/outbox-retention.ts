/**
 * Retention for event_outbox: deletes rows older than retentionMs and than the published
 * watermark (connector-watermark.ts: what the outbox connector's committed offset says is on the
 * wire), so the table stops growing without bound and never loses a row whose event Kafka does
 * not hold. Run by every outbox-keeper process, one per database (start-outbox-keeper.ts).
 *
 * One pass: cutoff = the older of database now − retentionMs and the watermark; then pages of
 * batchSize rows in id order, each deleted by primary key (sql/purge-event-outbox.ts), with a
 * pause of pauseMs between pages so a large purge never crowds out the expiry transactions; the
 * pass ends at the first page that reaches a young row. The next pass starts intervalMs later.
 *
 * No coordination between processes is needed: pages are deleted by id with the cutoff
 * re-checked, so two instances purging at once only repeat some reads, never delete a row that
 * should stay.
 *
 * A pass is the tick of `loop`, a PollLoop (runtime/poll-loop.ts), which is the component: NEW →
 * RUNNING → STOPPING → STOPPED, or FAILED after deterministic failures in a row (a missing table,
 * a revoked DELETE grant), which the outbox-keeper role reports on /healthz; a failed pass is
 * counted (onFailure) and a retriable one retried after a jittered back-off. Its stop() wakes any
 * pause and waits for the page in flight.
 */
import type { Knex } from 'knex';
import { ConfigError } from '../core/errors';
import { Backoffs, type FailureKind } from '../runtime/retry-policy';
import type { Logger } from '../ops/logger';
import { PollLoop, type TickContext } from '../runtime/poll-loop';
import { WakeableSleeps } from '../runtime/wakeable-sleeps';
import { purgeCutoff, purgeEventOutboxPage, type EventOutboxCursor } from './sql/purge-event-outbox';
import type { PublishedWatermark } from './connector-watermark';

export type OutboxRetentionOptions = Readonly<{
  db: Knex;
  /** Rows written longer ago than this (and published) are deleted (the caller starts no retention for "keep"). */
  retentionMs: number;
  /** Rows per page (one DELETE). */
  batchSize: number;
  /** Between two pages of a pass. */
  pauseMs: number;
  /** From the end of a pass to the start of the next. */
  intervalMs: number;
  logger: Logger;
  /** Told of every page's deleted rows and of every failed pass (metrics). */
  observer?: Partial<{ purged: (rows: number) => void; failed: (err: unknown, kind: FailureKind) => void }>;
  /** Back-off ceiling after a failed pass. Default 60 s. */
  maxBackoffMs?: number;
  /**
   * Rows written before `before` (the database's clock) have their events on the wire; or why
   * nothing is known. A pass deletes only rows older than both this and retentionMs, and none
   * while waiting, so an outbox connector stopped, failed or stuck on a partition for longer
   * than the retention never loses an event to retention.
   */
  published: () => Promise<PublishedWatermark>;
}>;

/** Outside a loop (purgeOnce from tests and tooling): the pauses on sleeps of its own, never asked to stop. */
function unlooped(): TickContext {
  const sleeps = new WakeableSleeps();
  return { sleep: (ms) => sleeps.sleep(ms), stopping: () => false };
}

export class OutboxRetention {
  /** The passes, one a tick: the component to start and stop. */
  readonly loop: PollLoop;
  private purgedRows = 0;
  private readonly log: Logger;

  constructor(private readonly opts: OutboxRetentionOptions) {
    this.log = opts.logger.child({ component: 'outbox-retention' });
    const problems = [
      Number.isInteger(opts.retentionMs) && opts.retentionMs >= 1 ? null : 'retentionMs: an integer >= 1',
      Number.isInteger(opts.batchSize) && opts.batchSize >= 1 && opts.batchSize <= 10_000 ? null : 'batchSize: an integer in 1..10000',
      Number.isInteger(opts.pauseMs) && opts.pauseMs >= 0 ? null : 'pauseMs: an integer >= 0',
      Number.isInteger(opts.intervalMs) && opts.intervalMs >= 1 ? null : 'intervalMs: an integer >= 1',
    ].filter((p): p is string => p !== null);
    if (problems.length > 0) throw new ConfigError(`invalid outbox retention options: ${problems.join('; ')}`, { problems });
    this.loop = new PollLoop({
      name: 'outbox retention',
      tick: async (ctx) => void (await this.purgeOnce(ctx)),
      intervalMs: opts.intervalMs,
      backoff: { ...Backoffs.retention, ...(opts.maxBackoffMs !== undefined && { maxMs: opts.maxBackoffMs }) },
      logger: this.log,
      onFailure: (err, kind) => opts.observer?.failed?.(err, kind),
    });
  }

  /** Rows this instance deleted. */
  get purged(): number {
    return this.purgedRows;
  }

  /** One whole pass (for tests and tooling, or a tick of the loop): returns the rows deleted. Errors are thrown. */
  async purgeOnce(ctx: TickContext = unlooped()): Promise<number> {
    const published = await this.opts.published();
    if ('waiting' in published) {
      this.log.info({ reason: published.waiting }, 'outbox retention waits: nothing is known to be on the wire');
      return 0;
    }
    const byAge = await purgeCutoff(this.opts.db, this.opts.retentionMs);
    const cutoff = published.before < byAge ? published.before : byAge;
    if (cutoff !== byAge) {
      this.log.warn(
        { retentionMs: this.opts.retentionMs, heldForMs: byAge.getTime() - cutoff.getTime() },
        "outbox retention held back: rows younger than the outbox connector's committed offset may not be on the wire yet, and are kept",
      );
    }
    let cursor: EventOutboxCursor | null = null;
    let deleted = 0;
    for (;;) {
      const page = await purgeEventOutboxPage(this.opts.db, cutoff, cursor, this.opts.batchSize);
      deleted += page.deleted;
      this.purgedRows += page.deleted;
      if (page.deleted > 0) this.opts.observer?.purged?.(page.deleted);
      cursor = page.next;
      if (!page.full || ctx.stopping()) break;
      if (this.opts.pauseMs > 0) await ctx.sleep(this.opts.pauseMs);
      if (ctx.stopping()) break;
    }
    if (deleted > 0) this.log.info({ deleted, cutoff }, 'outbox retention pass deleted rows older than its cutoff');
    return deleted;
  }
}
