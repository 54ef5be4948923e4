/** Time as a dependency: timing logic never calls Date.now() itself, so tests can drive it. */
export type Clock = Readonly<{ now: () => number }>;

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** A clock shifted by a fixed offset: how tests model an instance whose clock runs ahead or behind. */
export function offsetClock(base: Clock, offsetMs: number): Clock {
  return Object.freeze({ now: () => base.now() + offsetMs });
}
