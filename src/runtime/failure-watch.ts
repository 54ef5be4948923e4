/**
 * The parts of a role that can fail for good (a PollLoop: runtime/poll-loop.ts), watched together:
 * health() names every failed one, and `failed` resolves at the first, which the process turns
 * into /healthz 503 and exit 1 (main.ts). Parts started later (after a registry came back) are
 * added as they start.
 */
import type { Component, Health } from './lifecycle';

export type Failable = Pick<Component, 'health' | 'failed'>;

/** What a role made of watched parts hands main.ts: stopped as one, its health, its first failure. */
export type WatchedRole = Pick<Component, 'stop' | 'health' | 'failed'>;

export class FailureWatch {
  private readonly parts: Failable[] = [];
  private resolveFailed!: (err: Error) => void;
  private readonly failure$: Promise<Error> = new Promise((resolve) => (this.resolveFailed = resolve));

  add<T extends Failable>(part: T): T {
    this.parts.push(part);
    void part.failed().then((err) => this.resolveFailed(err));
    return part;
  }

  /** Resolves at the first part FAILED. */
  failed(): Promise<Error> {
    return this.failure$;
  }

  health(): Health {
    const reasons = this.parts.map((p) => p.health()).flatMap((h) => (h.ok ? [] : [h.reason]));
    return reasons.length === 0 ? { ok: true } : { ok: false, reason: reasons.join('; ') };
  }
}
