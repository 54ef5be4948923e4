/**
 * The switches as the expirer and the scanner apply them: is this paused, and how many rows of
 * an entity may go to an expiry transaction right now (its throttle).
 *
 * The throttle is a token bucket per entity and per process, shared by the process's expirer and
 * scanner: `ctl throttle --per-second N` lets each process transition at most N rows a second
 * (plus one second's worth saved up), so a deployment of k expirer processes does up to k × N.
 * The bucket follows the switch when it changes, and again on every call, so a new rate applies
 * from the moment the poll saw it whichever listener runs first.
 */
import type { Clock } from '../core/clock';
import type { SwitchName } from './switch-state';
import type { SwitchReader } from './switches';
import { TokenBucket } from './token-bucket';

export interface TransitionGate {
  paused(what: SwitchName): boolean;
  /** Rows of `entity` that may go now: Infinity when not throttled. */
  allowance(entity: string): number;
  /** Spends `n` of the allowance (rows sent to a transaction). */
  consume(entity: string, n: number): void;
  /**
   * 0 when at least one row of `entity` may go now; otherwise how long until `wanted` rows may
   * (capped at the bucket's capacity), so a throttled stage wakes for a batch worth sending, not
   * for every single token.
   */
  msUntilAllowed(entity: string, wanted: number): number;
  /** Calls `listener` after every change of the switches; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** No switches: nothing paused, nothing throttled (unit tests, tools). */
export const openGate: TransitionGate = Object.freeze({
  paused: () => false,
  allowance: () => Number.POSITIVE_INFINITY,
  consume: () => undefined,
  msUntilAllowed: () => 0,
  onChange: () => () => undefined,
});

export function createTransitionGate(switches: SwitchReader, clock: Clock): TransitionGate {
  const buckets = new Map<string, TokenBucket>();
  const bucketOf = (entity: string): TokenBucket | undefined => {
    const rate = switches.perSecond(entity);
    let bucket = buckets.get(entity);
    if (rate === undefined) {
      buckets.delete(entity);
      return undefined;
    }
    if (bucket === undefined) buckets.set(entity, (bucket = new TokenBucket(rate, clock)));
    else if (bucket.ratePerSecond !== rate) bucket.setRate(rate);
    return bucket;
  };
  // The buckets in use follow a change at once; a throttle on an entity not yet seen gets its
  // bucket (full, as a fresh one always starts) on its first call, which is the same thing.
  switches.onChange(() => {
    for (const entity of [...buckets.keys()]) bucketOf(entity);
  });
  return {
    paused: (what) => switches.paused(what),
    allowance: (entity) => bucketOf(entity)?.available() ?? Number.POSITIVE_INFINITY,
    consume: (entity, n) => bucketOf(entity)?.take(n),
    msUntilAllowed: (entity, wanted) => {
      const bucket = bucketOf(entity);
      if (bucket === undefined || bucket.available() >= 1) return 0;
      return bucket.msUntil(wanted);
    },
    onChange: (listener) => switches.onChange(listener),
  };
}
