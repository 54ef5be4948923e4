/**
 * A background loop that polls: one tick, a wait, the next tick. The way the outbox retention,
 * the compensation scanner's loops and the capture probe's writes run, instead of a
 * hand-written while loop each.
 *
 *   tick ok                → wait intervalMs → tick
 *   tick failed, retriable → counted, logged, wait a jittered backoff (classifyFailure: a
 *                            database or broker away) → tick, for as long as it lasts
 *   tick failed, deterministic, `deterministicAttempts` times in a row
 *                          → FAILED: the loop ends, `failed` resolves with the error and
 *                            health() names it, so /healthz and the exit code report it
 *                            (retrying a missing table or a revoked grant for ever, with
 *                            /healthz green, hides it)
 *
 * The failed ticks are retried by the one retry runner (runtime/retry.ts), its waits on wakeable
 * sleeps. Lifecycle: NEW → RUNNING → STOPPING → STOPPED, or RUNNING → FAILED.
 * stop() is idempotent: it wakes a sleeping loop at once and waits for the tick in flight, at
 * most `stopDeadlineMs` (a tick stuck past it is abandoned, logged), so a shutdown always ends.
 */
import { settlesWithin, type Component, type Health, type Lifecycle } from './lifecycle';
import { retry } from './retry';
import type { Backoff, FailureKind } from './retry-policy';
import { WakeableSleeps } from './wakeable-sleeps';
import type { Logger } from '../ops/logger';

/** What a tick may use: a sleep that stop() cuts short, and whether it should return early. */
export type TickContext = Readonly<{ sleep: (ms: number) => Promise<void>; stopping: () => boolean }>;

export type PollLoopOptions = Readonly<{
  /** Names the loop in logs, health and its failure counter. */
  name: string;
  /** One round; a number it returns is the wait before the next (a rate limit, more work now: 0). */
  tick: (ctx: TickContext) => Promise<number | void>;
  /** From the end of a tick to the start of the next, unless the tick says otherwise. */
  intervalMs: number;
  /** After a failed tick. */
  backoff: Backoff;
  /** Deterministic failures in a row before the loop is FAILED. Default 3: a misclassified blip gets more chances. */
  deterministicAttempts?: number;
  /** How long stop() waits for the tick in flight. Default 30 s. */
  stopDeadlineMs?: number;
  logger: Logger;
  /** Every failed tick (a metric). */
  onFailure?: (err: unknown, kind: FailureKind) => void;
  random?: () => number;
}>;

export class PollLoop implements Component {
  private state: Lifecycle = 'NEW';
  private running: Promise<void> = Promise.resolve();
  private readonly sleeps = new WakeableSleeps();
  private failure?: Error;
  private stopped?: Promise<void>;
  private resolveFailed!: (err: Error) => void;
  private readonly failure$: Promise<Error> = new Promise((resolve) => (this.resolveFailed = resolve));

  constructor(private readonly opts: PollLoopOptions) {}

  get lifecycle(): Lifecycle {
    return this.state;
  }

  /** Ready at once: it joins nothing. */
  async ready(): Promise<void> {}

  /** Resolves (never rejects) when the loop is FAILED. */
  failed(): Promise<Error> {
    return this.failure$;
  }

  health(): Health {
    return this.failure === undefined ? { ok: true } : { ok: false, reason: `${this.opts.name} FAILED: ${this.failure.message}` };
  }

  /** Resolves once the loop runs (its first tick under way); a second start does nothing. */
  async start(): Promise<void> {
    if (this.state !== 'NEW') return;
    this.state = 'RUNNING';
    this.running = this.loop();
  }

  /** Idempotent: every call returns the first one's promise. */
  stop(): Promise<void> {
    this.stopped ??= this.stopOnce();
    return this.stopped;
  }

  private async stopOnce(): Promise<void> {
    if (this.state === 'NEW') this.state = 'STOPPED';
    if (this.state !== 'RUNNING' && this.state !== 'STOPPING') return;
    this.state = 'STOPPING';
    this.sleeps.wakeAll();
    const deadlineMs = this.opts.stopDeadlineMs ?? 30_000;
    if (!(await settlesWithin(this.running, deadlineMs)))
      this.opts.logger.warn({ loop: this.opts.name, deadlineMs }, 'a tick outlived the stop deadline; abandoned');
    this.state = 'STOPPED';
  }

  private async loop(): Promise<void> {
    const ctx: TickContext = { sleep: (ms) => this.sleeps.sleep(ms), stopping: () => this.state !== 'RUNNING' };
    const limit = this.opts.deterministicAttempts ?? 3;
    // A wait only while running: stop() may have woken the sleepers already.
    const sleep = (ms: number) => (this.state === 'RUNNING' && ms > 0 ? this.sleeps.sleep(ms) : Promise.resolve());
    while (this.state === 'RUNNING') {
      // Deterministic failures in a row: a retriable one, like a tick that succeeds, ends the row.
      let deterministic = 0;
      try {
        const next = await retry(async () => (this.state === 'RUNNING' ? this.opts.tick(ctx) : undefined), {
          // The runner's count is the failures in a row (the backoff grows with it); the row of
          // deterministic ones is counted here, and what fails the loop is thrown from beforeWait.
          policy: { backoff: this.opts.backoff, deterministicAttempts: Infinity },
          what: this.opts.name,
          beforeWait: (err, _attempt, kind) => {
            deterministic = kind === 'deterministic' ? deterministic + 1 : 0;
            this.opts.onFailure?.(err, kind);
            if (deterministic >= limit && this.state === 'RUNNING') throw err;
          },
          log: (err, failures, kind, waitMs) =>
            this.opts.logger.error({ err, loop: this.opts.name, failures, kind, backoffMs: waitMs }, `${this.opts.name} failed; retried`),
          sleep,
          ...(this.opts.random !== undefined && { random: this.opts.random }),
        });
        await sleep(typeof next === 'number' ? next : this.opts.intervalMs);
      } catch (err) {
        this.fail(err);
        return;
      }
    }
  }

  private fail(err: unknown): void {
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.state = 'FAILED';
    this.opts.logger.error({ err, loop: this.opts.name }, `${this.opts.name} failed deterministically; FAILED`);
    this.resolveFailed(this.failure);
  }
}
