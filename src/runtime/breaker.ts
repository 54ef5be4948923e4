/**
 * Circuit breakers (opossum) around what the stages call out to: the expiry transactions and
 * the producer. Closed, calls go through; after enough failures the breaker opens and calls
 * fail at once with EOPENBREAKER, which the retry policy counts as retriable, so the work is
 * queued again with backoff instead of piling onto a database or broker that is down. After
 * `resetTimeoutMs` one call is let through (half-open): its success closes the breaker.
 *
 * Nothing is skipped while open: entries stay unfinished, so no offset is committed past them
 * (the memory cap then pauses their partitions: back-pressure), and the consume loop keeps
 * heartbeating. Deterministic failures (bad data, bugs) do not count towards opening: the
 * dependency is fine, the input is not.
 *
 * A statement past its deadline (STATEMENT_DEADLINE, db/statement-deadline.ts) or a connection
 * that timed out opens the breaker at once. A database that does not answer fails slowly, a
 * few calls per deadline, never the volume a rolling window needs to open on its share of
 * failures; and the deadline is above the lock wait, so such a failure is never a busy row but
 * a server not answering. Which of the two a frozen server's batches see depends on whether an
 * idle pooled connection was there to hang on: both mean the same. The half-open probe after
 * `resetTimeoutMs` is one call: if it hangs too, the breaker opens again.
 */
import CircuitBreaker from 'opossum';
import { classifyFailure } from './retry-policy';
import { TimebucketError } from '../core/errors';
import type { Logger } from '../ops/logger';

export type BreakerState = 'closed' | 'half-open' | 'open';

export type Breaker<A extends unknown[], R> = Readonly<{
  fire: (...args: A) => Promise<R>;
  state: () => BreakerState;
  shutdown: () => void;
}>;

export type BreakerOptions = Readonly<{
  name: string;
  /** Share of failed calls in the rolling window that opens the breaker. */
  errorThresholdPercentage?: number;
  /** Calls in the window before the breaker may open at all. */
  volumeThreshold?: number;
  /** How long the breaker stays open before a half-open probe. */
  resetTimeoutMs?: number;
  logger: Logger;
  onStateChange?: (name: string, state: BreakerState) => void;
}>;

export function createBreaker<A extends unknown[], R>(action: (...args: A) => Promise<R>, opts: BreakerOptions): Breaker<A, R> {
  const breaker = new CircuitBreaker(action, {
    name: opts.name,
    // The calls have their own deadlines (lock wait timeout, kafkajs request timeout); a
    // breaker timeout would only abandon a call that is still running.
    timeout: false,
    errorThresholdPercentage: opts.errorThresholdPercentage ?? 50,
    volumeThreshold: opts.volumeThreshold ?? 5,
    resetTimeout: opts.resetTimeoutMs ?? 5_000,
    rollingCountTimeout: 10_000,
    // Not failures of what the breaker guards: a deterministic one (the input's), and a transition
    // waiting for its event's schema id (the registration's, not the database's: counting it
    // would open the breaker for the batches whose events have ids).
    errorFilter: (err: unknown) => classifyFailure(err) === 'deterministic' || (err instanceof TimebucketError && err.code === 'SCHEMA_ID_MISSING'),
  });
  const state = (): BreakerState => (breaker.opened ? 'open' : breaker.halfOpen ? 'half-open' : 'closed');
  const report = (next: BreakerState) => () => {
    const log = next === 'open' ? opts.logger.warn.bind(opts.logger) : opts.logger.info.bind(opts.logger);
    log({ breaker: opts.name, state: next }, `circuit breaker ${next}`);
    opts.onStateChange?.(opts.name, next);
  };
  breaker.on('failure', (err: unknown) => {
    if (isSilence(err)) breaker.open();
  });
  breaker.on('open', report('open'));
  breaker.on('halfOpen', report('half-open'));
  breaker.on('close', report('closed'));
  return { fire: (...args: A) => breaker.fire(...args), state, shutdown: () => breaker.shutdown() };
}

/** A server that does not answer: a statement past its deadline, or a connection attempt timed out (mysql2's connectTimeout, or TCP's). */
function isSilence(err: unknown): boolean {
  if (err instanceof TimebucketError) return err.code === 'STATEMENT_DEADLINE';
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ETIMEDOUT';
}
