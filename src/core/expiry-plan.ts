/**
 * Deciding, inside the expirer's transaction, what each scheduled entry means now that its row
 * is locked and the database clock has been read. Pure, so every case is unit-tested. One plan
 * is for one transition; `rows` are what its locking read returned, each in a from-state by the
 * database's own comparison (expire/sql/lock-transition-rows.ts), which the guarded update
 * repeats: under a case-insensitive collation a stored 'active' is in the from-set 'ACTIVE' for
 * both, so it must be for the plan too, or the row would be judged stale on every pass.
 *
 *   due        row is in a from-state and its due time <= db now                 → transition it
 *   notYetDue  in a from-state, due time > db now, and not later than the entry's time:
 *              the consumer's clock ran ahead of the database's                 → retry later (I2)
 *   stale      row not locked (gone, transitioned, paid, used: not in a from-state), or its due time pushed past
 *              the entry's: the newer CDC event scheduled a newer entry          → drop
 *
 * Invariant I2: the database clock decides, never the consumer's. A row found not yet due is
 * re-scheduled, never dropped.
 */
import type { ReminderOf } from './bucket-entry';
import type { StatusValue } from './entity-catalogue';

/** `remind`: a reminder's entry (core/reminder-plan.ts), whose expireAtMs is its fire time. */
export type ScheduledEntry = Readonly<{ id: string; expireAtMs: number; remind?: ReminderOf }>;
/** A column value as read from the locked row, decoded: BIGINT → decimal string, DATETIME → epoch ms. */
export type ColumnValue = string | number | null;

/** `expireAtMs`: the row's due column as epoch ms (whatever its due kind). */
export type LockedRow = Readonly<{ id: string; status: StatusValue; expireAtMs: number }>;
/** A row as a batch reads it (the expiry's locking read, a reminder's plain read): with the columns its event names. */
export type ReadRow = LockedRow & Readonly<{ columns: Readonly<Record<string, ColumnValue>> }>;

export type ExpiryPlan<R extends LockedRow> = Readonly<{
  due: R[];
  notYetDue: Array<{ entry: ScheduledEntry; retryInMs: number }>;
  stale: ScheduledEntry[];
}>;

export function planExpiry<R extends LockedRow>(entries: readonly ScheduledEntry[], rows: readonly R[], dbNowMs: number): ExpiryPlan<R> {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const due = new Map<string, R>();
  const notYetDue: Array<{ entry: ScheduledEntry; retryInMs: number }> = [];
  const stale: ScheduledEntry[] = [];
  for (const entry of entries) {
    const row = byId.get(entry.id);
    if (row === undefined || row.expireAtMs > entry.expireAtMs) {
      stale.push(entry);
    } else if (row.expireAtMs > dbNowMs) {
      notYetDue.push({ entry, retryInMs: row.expireAtMs - dbNowMs });
    } else if (due.has(row.id)) {
      // Two entries for one row in a batch (a CDC duplicate): one transition, the other is stale.
      stale.push(entry);
    } else {
      due.set(row.id, row);
    }
  }
  return { due: [...due.values()], notYetDue, stale };
}
