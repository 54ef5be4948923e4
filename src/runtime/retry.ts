/**
 * The one retry loop. `classifyFailure` (runtime/retry-policy.ts) says whether waiting can help; the
 * policy says how often and how long. Between attempts the caller may act (a consumer
 * heartbeats, so a long outage does not cost it its partitions) or end the retries (a stage
 * that is stopping gives the work back instead of sleeping on). The last failure is thrown
 * unchanged, so callers and kafkajs see what actually happened. Every wait of the house that
 * follows a failure is this one's (the polling loop's, the capture probe reader's, a registry
 * conflict's); a wait that follows nothing (an idle pause) is a wakeable sleep's
 * (runtime/wakeable-sleeps.ts).
 */
import { backoffMs, classifyFailure, type FailureKind, type RetryPolicy } from './retry-policy';
import type { Logger } from '../ops/logger';
import { systemClock, type Clock } from '../core/clock';

export type RetryOptions = Readonly<{
  policy: RetryPolicy;
  /** What is being retried, for the warning each failed attempt logs. */
  what: string;
  /** Where the warning of each failed attempt goes (`<what> failed; will retry`), unless `log` is given. */
  logger?: Logger;
  /** Instead of that warning: the part's own line for a failed attempt (or none), before its wait. */
  log?: (err: unknown, attempt: number, kind: FailureKind, waitMs: number) => void;
  /** Asked before each wait: false ends the retries with the last failure (a stage stopping). */
  keepGoing?: () => boolean;
  /** Runs before each wait; what it throws ends the retries (a heartbeat that finds a rebalance). */
  beforeWait?: (err: unknown, attempt: number, kind: FailureKind) => void | Promise<void>;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}>;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function retry<T>(work: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const { policy } = opts;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work(attempt);
    } catch (err) {
      const kind = classifyFailure(err);
      const limit = kind === 'retriable' ? (policy.retriableAttempts ?? Infinity) : policy.deterministicAttempts;
      if (attempt >= limit || opts.keepGoing?.() === false) throw err;
      await opts.beforeWait?.(err, attempt, kind);
      const waitMs = backoffMs(attempt, policy.backoff, opts.random);
      if (opts.log !== undefined) opts.log(err, attempt, kind, waitMs);
      else opts.logger?.warn({ err, attempt, kind, waitMs }, `${opts.what} failed; will retry`);
      await (opts.sleep ?? realSleep)(waitMs);
    }
  }
}

/**
 * `keepGoing` and `sleep` for retries that end `timeoutMs` from now (a wait bounded by a deadline
 * rather than by attempts): no attempt starts, and no wait runs, past it.
 */
export function withinDeadline(
  timeoutMs: number,
  clock: Clock = systemClock,
  sleep: (ms: number) => Promise<void> = realSleep,
): Pick<RetryOptions, 'keepGoing' | 'sleep'> {
  const deadline = clock.now() + timeoutMs;
  return { keepGoing: () => clock.now() < deadline, sleep: (ms) => sleep(Math.max(0, Math.min(ms, deadline - clock.now()))) };
}
