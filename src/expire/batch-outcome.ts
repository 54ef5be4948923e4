import type { ExpiryPlan, LockedRow, ScheduledEntry } from '../core/expiry-plan';

/** What one expiry transaction did with its batch; the hold stage acts on each list. */
export type BatchOutcome = Readonly<{
  /** Transitioned by this transaction (an outbox row was inserted for each). */
  transitioned: ReadonlyArray<{ id: string; dueAtMs: number }>;
  /** Not yet due by the database clock: schedule again after retryInMs (invariant I2). */
  notYetDue: ReadonlyArray<{ entry: ScheduledEntry; retryInMs: number }>;
  /** Nothing to do: already transitioned, no longer expirable, or superseded by a newer time. */
  stale: readonly ScheduledEntry[];
  /**
   * Not run: the transition's first pass is held at the batch's table (db/first-pass-holds.ts).
   * Done, like stale, and nothing else: the compensation scanner, which reads every overdue row
   * in the from-states, moves their rows once the hold is lifted. (`transitioned`, `notYetDue`
   * and `stale` are empty then, and `dbNowMs` is the process's clock: no transaction ran.)
   */
  held?: readonly ScheduledEntry[];
  dbNowMs: number;
  /** A reminder batch's (expire/reminder-batch.ts): `transitioned` is empty, and nothing of it is a transition. */
  reminders?: true;
}>;

/** The outcome of a committed plan: what the transaction reports back to the hold stage. */
export function outcomeOf(plan: ExpiryPlan<LockedRow>, dbNowMs: number): BatchOutcome {
  return {
    transitioned: plan.due.map((r) => ({ id: r.id, dueAtMs: r.expireAtMs })),
    notYetDue: plan.notYetDue,
    stale: plan.stale,
    dbNowMs,
  };
}
