/**
 * A token bucket: `ratePerSecond` tokens a second, at most one second's worth (and at least one
 * token) saved up. The throttle of an entity's transitions (`timebucket ctl throttle`): one
 * token per row sent to an expiry transaction.
 *
 * Time comes from the injected clock and the bucket never sets a timer: callers ask how long
 * to wait (msUntil) and wait themselves, so tests drive it with a fake clock.
 */
import type { Clock } from '../core/clock';

export class TokenBucket {
  private tokens: number;
  private lastMs: number;

  constructor(
    private rate: number,
    private readonly clock: Clock,
  ) {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError('rate must be a positive number');
    // Starts full: a fresh throttle lets one second's worth through, then the rate.
    this.tokens = this.capacity;
    this.lastMs = clock.now();
  }

  get ratePerSecond(): number {
    return this.rate;
  }

  /** One second's worth, and at least one token (a rate below 1/s still lets single rows go). */
  get capacity(): number {
    return Math.max(1, this.rate);
  }

  /** A new rate applies from now; tokens saved beyond the new capacity are dropped. */
  setRate(rate: number): void {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError('rate must be a positive number');
    this.refill();
    this.rate = rate;
    this.tokens = Math.min(this.tokens, this.capacity);
  }

  /** Whole tokens available now. */
  available(): number {
    this.refill();
    return Math.floor(this.tokens);
  }

  /** Takes `n` tokens (callers take at most what available() said). */
  take(n: number): void {
    this.refill();
    this.tokens = Math.max(0, this.tokens - n);
  }

  /** Milliseconds until `n` whole tokens are available (n is capped at the capacity), 0 if now. */
  msUntil(n: number): number {
    this.refill();
    const wanted = Math.min(Math.max(1, n), Math.floor(this.capacity));
    const missing = wanted - this.tokens;
    return missing <= 0 ? 0 : Math.ceil((missing * 1_000) / this.rate);
  }

  private refill(): void {
    const now = this.clock.now();
    // A clock that steps back adds nothing (and takes nothing).
    const elapsed = Math.max(0, now - this.lastMs);
    this.lastMs = Math.max(this.lastMs, now);
    this.tokens = Math.min(this.capacity, this.tokens + (elapsed * this.rate) / 1_000);
  }
}
