/** Time as a dependency: timing logic never calls Date.now() itself, so tests can drive it. */
export type Clock = Readonly<{ now: () => number }>;

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** A clock shifted by a fixed offset: how tests model an instance whose clock runs ahead or behind. */
export function offsetClock(base: Clock, offsetMs: number): Clock {
  return Object.freeze({ now: () => base.now() + offsetMs });
}

/**
 * Node's timers hold at most 2^31 − 1 ms (about 24.8 days); a longer delay fires after 1 ms,
 * which would turn a hold on a far-future bucket into a busy loop. Waits are capped instead:
 * whoever wakes early re-checks and waits again.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function timerDelay(untilMs: number, nowMs: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, untilMs - nowMs));
}
