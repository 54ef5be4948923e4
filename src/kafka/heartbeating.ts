import { retry, type RetryOptions } from '../runtime/retry';

/**
 * `work` with the member's heartbeat sent while it runs. A send that kafkajs retries on its own
 * for longer than the session timeout (a topic gone, a broker away: one attempt took 10 s under
 * load) would otherwise cost the member its partitions between the retry helper's heartbeats,
 * and what it had finished but not yet committed would be done again by the next owner (a
 * record dead-lettered twice). kafkajs's heartbeat() sends only once its heartbeat interval has
 * passed, so asking every second is cheap. A heartbeat that fails (a rebalance under way) is
 * left to the caller, whose own checks (the retry's beforeWait, the ownership check) see it.
 */
export async function heartbeating<T>(work: () => Promise<T>, heartbeat: () => Promise<void>, everyMs = 1_000): Promise<T> {
  let inFlight = false;
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = true;
    heartbeat()
      .catch(() => undefined)
      .finally(() => (inFlight = false));
  }, everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * `work` retried by the one retry runner (runtime/retry.ts), heartbeating while each attempt runs
 * and before each wait, so a long outage does not cost the member its partitions; `keepGoing`
 * false (the member stopping, or no longer owning the partition) ends the retries with the last
 * failure. How a stage appends to the rings or the DLQ from inside a batch.
 */
export function retryHeartbeating<T>(
  work: () => Promise<T>,
  heartbeat: () => Promise<void>,
  opts: Pick<RetryOptions, 'policy' | 'what' | 'logger' | 'keepGoing'>,
): Promise<T> {
  return retry(() => heartbeating(work, heartbeat), { ...opts, beforeWait: () => heartbeat() });
}
