/**
 * Retention for the outbox: deletes rows published more than retentionMs ago, so the table
 * stops growing without bound. Run by every relay process beside its loops (start-relay.ts).
 *
 * One pass: cutoff = database now − retentionMs; then keyset pages of batchSize rows in
 * (published_at, id) order, each deleted by primary key (sql/purge-published-outbox.ts), with a
 * pause of pauseMs between pages so a large purge never crowds out the relays and the expiry
 * transactions; the pass ends at the first short page. The next pass starts intervalMs later.
 *
 * No coordination between processes is needed: pages are deleted by id with the cutoff
 * re-checked, so two instances purging at once only repeat some reads, never delete a row that
 * should stay. Unpublished rows are never touched, nor is outbox_poison.
 *
 * Lifecycle: NEW → RUNNING → STOPPING → STOPPED. Errors are logged and retried after a jittered
 * back-off; stop() wakes any pause and waits for the page in flight.
 */
import type { Knex } from 'knex';
import { ConfigError } from '../core/errors';
import type { Lifecycle } from '../core/lifecycle';
import { backoffMs, Backoffs } from '../core/retry-policy';
import { WakeableSleeps } from '../core/wakeable-sleeps';
import type { Logger } from '../ops/logger';
import { purgeCutoff, purgePublishedPage, type PurgeCursor, type PurgePage } from './sql/purge-published-outbox';

/** One page of a pass after a cursor of the page function's own (null: the first page). */
export type PurgePageFn<C> = (db: Knex, cutoff: Date, after: C | null, limit: number) => Promise<PurgePage<C>>;

export type OutboxRetentionOptions<C = PurgeCursor> = Readonly<{
  db: Knex;
  /** Which table's rows go: the relay outbox's published rows (default), or event_outbox's old ones. */
  purgePage?: PurgePageFn<C>;
  /** Rows published longer ago than this are deleted (the caller starts no retention for "keep"). */
  retentionMs: number;
  /** Rows per page (one DELETE). */
  batchSize: number;
  /** Between two pages of a pass. */
  pauseMs: number;
  /** From the end of a pass to the start of the next. */
  intervalMs: number;
  logger: Logger;
  /** Told of every page's deleted rows (metrics). */
  observer?: Partial<{ purged: (rows: number) => void }>;
  /** Back-off ceiling after a failed pass. Default 60 s. */
  maxBackoffMs?: number;
}>;

export class OutboxRetention<C = PurgeCursor> {
  private state: Exclude<Lifecycle, 'FAILED'> = 'NEW';
  private loopDone: Promise<void> = Promise.resolve();
  private readonly sleeps = new WakeableSleeps();
  private purgedRows = 0;
  private readonly log: Logger;

  constructor(private readonly opts: OutboxRetentionOptions<C>) {
    this.log = opts.logger.child({ component: 'outbox-retention' });
    const problems = [
      Number.isInteger(opts.retentionMs) && opts.retentionMs >= 1 ? null : 'retentionMs: an integer >= 1',
      Number.isInteger(opts.batchSize) && opts.batchSize >= 1 && opts.batchSize <= 10_000 ? null : 'batchSize: an integer in 1..10000',
      Number.isInteger(opts.pauseMs) && opts.pauseMs >= 0 ? null : 'pauseMs: an integer >= 0',
      Number.isInteger(opts.intervalMs) && opts.intervalMs >= 1 ? null : 'intervalMs: an integer >= 1',
    ].filter((p): p is string => p !== null);
    if (problems.length > 0) throw new ConfigError(`invalid outbox retention options: ${problems.join('; ')}`, { problems });
  }

  get lifecycle(): Exclude<Lifecycle, 'FAILED'> {
    return this.state;
  }
  /** Rows this instance deleted. */
  get purged(): number {
    return this.purgedRows;
  }

  start(): void {
    if (this.state !== 'NEW') throw new Error(`OutboxRetention.start() in state ${this.state}: it starts once`);
    this.state = 'RUNNING';
    this.loopDone = this.loop();
  }

  /** Idempotent: wakes any pause, then waits for the page in flight. */
  async stop(): Promise<void> {
    if (this.state === 'NEW') this.state = 'STOPPED';
    if (this.state === 'STOPPED') return;
    this.state = 'STOPPING';
    this.sleeps.wakeAll();
    await this.loopDone;
    this.state = 'STOPPED';
  }

  /** One whole pass (for tests and tooling): returns the rows deleted. Errors are thrown. */
  async purgeOnce(): Promise<number> {
    const cutoff = await purgeCutoff(this.opts.db, this.opts.retentionMs);
    // Without a page function C is PurgeCursor, the default's own cursor.
    const purgePage = this.opts.purgePage ?? (purgePublishedPage as unknown as PurgePageFn<C>);
    let cursor: C | null = null;
    let deleted = 0;
    for (;;) {
      const page = await purgePage(this.opts.db, cutoff, cursor, this.opts.batchSize);
      deleted += page.deleted;
      this.purgedRows += page.deleted;
      if (page.deleted > 0) this.opts.observer?.purged?.(page.deleted);
      cursor = page.next;
      if (!page.full || this.isStopping()) break;
      if (this.opts.pauseMs > 0) await this.sleeps.sleep(this.opts.pauseMs);
      if (this.isStopping()) break;
    }
    if (deleted > 0) this.log.info({ deleted, cutoff }, 'outbox retention pass deleted published rows');
    return deleted;
  }

  /** A method, not an inline check: the state changes across the awaits in between. */
  private isStopping(): boolean {
    return this.state === 'STOPPING';
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.state === 'RUNNING') {
      let delayMs = this.opts.intervalMs;
      try {
        await this.purgeOnce();
        failures = 0;
      } catch (err) {
        failures += 1;
        delayMs = backoffMs(failures, { ...Backoffs.retention, ...(this.opts.maxBackoffMs !== undefined && { maxMs: this.opts.maxBackoffMs }) });
        this.log.error({ err, failures, backoffMs: delayMs }, 'outbox retention pass failed; retried');
      }
      if (this.state === 'RUNNING') await this.sleeps.sleep(delayMs);
    }
  }

}
