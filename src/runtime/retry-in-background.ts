/**
 * Work that must eventually succeed but that nothing waits for: retried in the background
 * (runtime/retry.ts, every failure, retriable or not, since only what needs the work waits for it:
 * a registry that refuses the schemas holds publishing, never transitions) until it succeeds or
 * stop() is called. The first attempt is the caller's own; the first retry follows a backoff.
 * A Component (runtime/lifecycle.ts) running from the call: RUNNING until the work succeeded or
 * stop() ended it (STOPPED); never FAILED (every failure is retried). stop() wakes the wait at
 * once and resolves after the attempt in flight; a second call returns the first one's promise.
 */
import { backoffMs, type Backoff } from './retry-policy';
import { WakeableSleeps } from './wakeable-sleeps';
import type { Logger } from '../ops/logger';
import { retry } from './retry';
import { NEVER_FAILS, type Component, type Lifecycle } from './lifecycle';

export type BackgroundRetry = Component &
  Readonly<{
    /** Resolves true once the work succeeded, false when stopped first. Never rejects. */
    done: Promise<boolean>;
  }>;

export function retryInBackground(
  work: () => Promise<void>,
  opts: Readonly<{ what: string; backoff: Backoff; logger: Logger; onFailure?: () => void }>,
): BackgroundRetry {
  const sleeps = new WakeableSleeps();
  let stopping = false;
  let state: Lifecycle = 'RUNNING';
  let stopped: Promise<void> | undefined;
  const done = (async () => {
    // After the caller's own first attempt: a backoff before the next.
    await sleeps.sleep(backoffMs(1, opts.backoff));
    if (stopping) return false;
    await retry(
      async (attempt) => {
        if (stopping) return;
        await work();
        opts.logger.info({ attempts: attempt + 1 }, `${opts.what}: succeeded`);
      },
      {
        policy: { backoff: opts.backoff, deterministicAttempts: Infinity },
        what: opts.what,
        logger: opts.logger,
        keepGoing: () => !stopping,
        beforeWait: () => opts.onFailure?.(),
        sleep: (ms) => sleeps.sleep(ms),
      },
    );
    return !stopping;
  })()
    .catch(() => false) // only a stop ends the retries with a failure
    .finally(() => (state = 'STOPPED'));
  return {
    done,
    get lifecycle() {
      return state;
    },
    start: async () => undefined, // running from the call
    // Methods as closures: callers hand `stop` on by itself (publish/schema-id-source.ts).
    stop: () =>
      (stopped ??= (async () => {
        if (state === 'RUNNING') state = 'STOPPING';
        stopping = true;
        sleeps.wakeAll();
        await done;
      })()),
    ready: async () => undefined,
    health: () => ({ ok: true }),
    failed: () => NEVER_FAILS,
  };
}
