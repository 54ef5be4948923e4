import type { ScheduledEntry } from '../core/expiry-plan';

/** What one expiry transaction did with its batch; the hold stage acts on each list. */
export type BatchOutcome = Readonly<{
  /** Transitioned by this transaction (an outbox row was inserted for each). */
  transitioned: ReadonlyArray<{ id: string; dueAtMs: number }>;
  /** Not yet due by the database clock: schedule again after retryInMs (invariant I2). */
  notYetDue: ReadonlyArray<{ entry: ScheduledEntry; retryInMs: number }>;
  /** Nothing to do: already transitioned, no longer expirable, or superseded by a newer time. */
  stale: readonly ScheduledEntry[];
  dbNowMs: number;
}>;
