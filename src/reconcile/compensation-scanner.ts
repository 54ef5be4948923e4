/**
 * The compensation scanner: the safety net under the stream. It pages through rows overdue by
 * more than a grace period (keyset reads of each transition's (status, due, id) index, see
 * sql/claim-scan-page.ts) and sends each page through the same batch transaction as the
 * expirer, with path = 'scanner'. The database clock guard and INSERT IGNORE keep it exact when
 * the stream gets there first; a row it transitions is a *catch*: the stream missed it (CDC
 * down past retention, a lost entry, a bug), so every catch is counted and logged with its ids.
 *
 * One loop per scan cursor: per transition of the entities file, and per from-value when a
 * transition has several (each value is its own index range). Each loop:
 *
 *   claim a page (shared cursor)  → nothing: the pass is over, wait `intervalMs`
 *                                 → rows: run the transition on them, count the catches, next page
 *   failure                       → counted; the retry policy's backoff; the page's rows stay
 *                                   overdue and the next pass reads them again (nothing is
 *                                   lost, I3). Deterministic failures in a row (a page that can
 *                                   never be read or transitioned) turn it FAILED: /healthz and
 *                                   the exit code say so, instead of a safety net that quietly
 *                                   does nothing
 *
 * Limits: one page at a time per cursor and instance, at most `maxPagesPerSecond` each, so it
 * never competes with the online path; with a healthy stream a pass reads an empty index range
 * and costs one short transaction. Several instances share each pass page by page (the cursor
 * row is their lease: no page is scanned twice in a pass, no instance idles while pages remain).
 *
 * The operator's switches (`timebucket ctl`, through the gate) are per ENTITY: while `scanner`
 * or the cursor's entity is paused no page of it is claimed (the scanner must not transition
 * what the operator paused), and a pause that lands mid-page leaves the rest of the page alone;
 * its rows stay overdue and the next pass reads them. A throttled entity's pages (of all its
 * transitions) go in slices of the tokens available, waiting for more in between.
 *
 * A transition held at a table because its first pass was refused (db/first-pass-holds.ts) is
 * not scanned there at all: no page of its cursors is claimed, so none of their passes completes
 * and the guard is still armed at the next start. Once the hold is lifted its first pass runs.
 *
 * Each cursor's loop is a PollLoop (runtime/poll-loop.ts). Lifecycle (runtime/lifecycle.ts): NEW →
 * RUNNING → STOPPING → STOPPED, or FAILED as soon as one cursor's loop is.
 */
import type { Clock } from '../core/clock';
import type { Component, Health, Lifecycle } from '../runtime/lifecycle';
import type { Backoff } from '../runtime/retry-policy';
import { WakeableSleeps } from '../runtime/wakeable-sleeps';
import { group, type Group } from '../runtime/group';
import { PollLoop, type TickContext } from '../runtime/poll-loop';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { BatchOutcome } from '../expire/batch-outcome';
import type { Logger } from '../ops/logger';
import { openGate, TransitionGate } from '../control/gate';
import { SCANNER_SWITCH } from '../control/switch-state';
import type { ScanPage } from './sql/claim-scan-page';
import { type ScanCursor } from '../core/scan-cursors';

export type ScannerOptions = Readonly<{
  /** One loop each (sql/claim-scan-page.ts scanCursorsOf). */
  cursors: readonly ScanCursor[];
  claimPage: (cursor: ScanCursor) => Promise<ScanPage>;
  /** The transition's batch transaction, path = 'scanner'. */
  expireBatch: (cursor: ScanCursor, entries: readonly ScheduledEntry[]) => Promise<BatchOutcome>;
  /** Between passes (and the idle wait when another instance holds the end of a pass). */
  intervalMs: number;
  maxPagesPerSecond: number;
  backoff: Backoff;
  clock: Clock;
  logger: Logger;
  /** The operator's pause and throttle switches; none by default. */
  gate?: TransitionGate;
  /** Whether the cursor's transition is held at its table (db/first-pass-holds.ts); none by default. */
  held?: (cursor: ScanCursor) => boolean;
  observer?: Partial<{
    scanned: (cursor: ScanCursor, rows: number) => void;
    caught: (cursor: ScanCursor, outcome: BatchOutcome) => void;
    passComplete: (cursor: ScanCursor, atMs: number) => void;
    failed: (cursor: ScanCursor, err: unknown) => void;
  }>;
}>;

export class CompensationScanner implements Component {
  /** A loop per cursor, stopped together; the first FAILED fails the scanner, which stays FAILED. */
  private readonly loops: Group;
  /** Loops waiting out a pause or a throttle: woken by any change of the switches, and by stop(). */
  private readonly pauseSleeps = new WakeableSleeps();
  private readonly gate: TransitionGate;
  private unsubscribe: () => void = () => undefined;
  /** Held cursors already named in the log (once each). */
  private readonly heldNamed = new Set<string>();

  constructor(private readonly opts: ScannerOptions) {
    if (!(opts.maxPagesPerSecond > 0)) throw new RangeError('maxPagesPerSecond must be > 0');
    this.gate = opts.gate ?? openGate;
    const loop = (cursor: ScanCursor) =>
      new PollLoop({
        name: `scanner ${cursor.key}`,
        tick: (ctx) => this.tick(cursor, ctx),
        intervalMs: opts.intervalMs,
        backoff: opts.backoff,
        logger: opts.logger.child(where(cursor)),
        onFailure: (err) => opts.observer?.failed?.(cursor, err),
      });
    this.loops = group('scanner', Object.fromEntries(opts.cursors.map((cursor) => [`scanner ${cursor.key}`, loop(cursor)])), { stopOrder: 'together' });
  }

  get lifecycle(): Lifecycle {
    return this.loops.lifecycle;
  }

  health(): Health {
    return this.loops.health();
  }

  /** Ready at once: it joins nothing. */
  async ready(): Promise<void> {}

  /** Resolves when a cursor's loop is FAILED. */
  failed(): Promise<Error> {
    return this.loops.failed();
  }

  /** A second start does nothing. */
  async start(): Promise<void> {
    if (this.lifecycle !== 'NEW') return;
    this.unsubscribe = this.gate.onChange(() => {
      this.pauseSleeps.wakeAll();
    });
    await this.loops.start();
  }

  /** Idempotent: a second call awaits the first one's stop. */
  async stop(): Promise<void> {
    this.unsubscribe();
    const stopping = this.loops.stop();
    this.pauseSleeps.wakeAll();
    await stopping;
  }

  /** One page of the cursor's pass; returns the wait before the next (the rate limit, or the next pass). */
  private async tick(cursor: ScanCursor, ctx: TickContext): Promise<number> {
    if (this.opts.held?.(cursor) === true) {
      if (!this.heldNamed.has(cursor.key)) this.opts.logger.warn(where(cursor), 'first pass held: this cursor is not scanned until a restart lifts the hold');
      this.heldNamed.add(cursor.key);
      await this.sleep(this.opts.intervalMs, ctx);
      return 0;
    }
    if (this.paused(cursor)) {
      // Checked again at least every interval, and at once when a switch changes.
      await this.sleep(this.opts.intervalMs, ctx);
      return 0;
    }
    const minPageMs = 1_000 / this.opts.maxPagesPerSecond;
    const startedAt = this.opts.clock.now();
    const page = await this.opts.claimPage(cursor);
    if (page.rows.length > 0) await this.transition(cursor, page, ctx);
    if (page.passComplete) this.opts.observer?.passComplete?.(cursor, this.opts.clock.now());
    // More pages in this pass: go on at the rate limit; otherwise wait for the next pass.
    return page.inPass && !page.passComplete ? Math.max(0, minPageMs - (this.opts.clock.now() - startedAt)) : this.opts.intervalMs;
  }

  private paused(cursor: ScanCursor): boolean {
    return this.gate.paused(SCANNER_SWITCH) || this.gate.paused(cursor.transition.entity);
  }

  /** The page in slices the throttle allows; a pause mid-page leaves the rest to the next pass. */
  private async transition(cursor: ScanCursor, page: ScanPage, ctx: TickContext): Promise<void> {
    this.opts.observer?.scanned?.(cursor, page.rows.length);
    const { entity } = cursor.transition;
    let rows = page.rows;
    while (rows.length > 0 && !ctx.stopping()) {
      if (this.paused(cursor)) {
        this.opts.logger.info({ ...where(cursor), left: rows.length }, 'scanner paused mid-page; the rest stays overdue for the next pass');
        return;
      }
      const allowed = Math.min(rows.length, this.gate.allowance(entity));
      if (allowed < 1) {
        await this.sleep(this.gate.msUntilAllowed(entity, rows.length), ctx);
        continue;
      }
      const slice = rows.slice(0, allowed);
      rows = rows.slice(allowed);
      this.gate.consume(entity, slice.length);
      await this.transitionSlice(cursor, slice);
    }
  }

  private async transitionSlice(cursor: ScanCursor, rows: ScanPage['rows']): Promise<void> {
    const outcome = await this.opts.expireBatch(cursor, rows);
    if (outcome.transitioned.length > 0) {
      this.opts.observer?.caught?.(cursor, outcome);
      // Every catch is a row the stream missed: worth an investigation, so the ids are logged.
      this.opts.logger.warn(
        { ...where(cursor), caught: outcome.transitioned.length, ids: outcome.transitioned.slice(0, 100).map((t) => t.id) },
        'scanner caught overdue rows the stream missed',
      );
    }
  }

  /** A pause's or a throttle's wait: `ms`, or until a switch changes or stop() wakes it. */
  private sleep(ms: number, ctx: TickContext): Promise<void> {
    // A loop that was busy when stop() woke the sleepers must not start a new wait.
    if (ctx.stopping()) return Promise.resolve();
    return this.pauseSleeps.sleep(ms);
  }
}

/** How a cursor is named in log lines. */
function where(cursor: ScanCursor): { entity: string; transition: string; cursor: string } {
  return { entity: cursor.transition.entity, transition: cursor.transition.name, cursor: cursor.key };
}
