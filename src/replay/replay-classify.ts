/**
 * What a bucket entry means against its row as it is now, read without locks: the explanation
 * side of a replay. Pure. The rules are planExpiry's (core/expiry-plan.ts), applied to the
 * entry's transition, so a dry run predicts what the expiry transaction would do, plus one
 * distinction the transaction does not need: among the entries it would skip, those it already
 * carried out.
 *
 *   due     in a from-state, its due time not pushed past the entry's, due by the database clock
 *   notDue  in a from-state, not pushed past the entry's time, but not yet due (I2: left alone)
 *   done    already transitioned by timebucket for this very due time: in the transition's `to`
 *           state, with the entry's due time, and every `value` assignment of the transition
 *           holding (order.cancelled: cancel_reason = 'TIMEOUT', which tells timebucket's
 *           cancellation from the application's): its event_key is the entry's
 *   stale   anything else: moved on by the application (paid, used, locked, revoked), extended
 *           (a later due time: a newer entry covers it) or its deadline removed, transitioned
 *           for another due time or by someone else, or deleted
 */
import type { Transition } from '../core/entity-catalogue';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { EntryRowState, EntryStates } from './sql/read-entry-states';

export type Verdict = 'due' | 'notDue' | 'done' | 'stale';
export type VerdictCounts = Record<Verdict, number>;

export function classifyEntry(transition: Transition, entry: ScheduledEntry, row: EntryRowState | undefined, dbNowMs: number): Verdict {
  if (row === undefined) return 'stale';
  if (transition.from.includes(row.status)) {
    if (row.expireAtMs === null || row.expireAtMs > entry.expireAtMs) return 'stale';
    return row.expireAtMs > dbNowMs ? 'notDue' : 'due';
  }
  if (row.status !== transition.to || !valuesHold(transition, row)) return 'stale';
  // A transition that assigns its own due column (a lock timeout clearing lock_expire_time) left
  // no due time to compare: its state and its assignments are all that say it was done.
  return clearsOwnDue(transition) || row.expireAtMs === entry.expireAtMs ? 'done' : 'stale';
}

function clearsOwnDue(transition: Transition): boolean {
  return transition.set.some((a) => a.column === transition.due.column);
}

function valuesHold(transition: Transition, row: EntryRowState): boolean {
  return transition.set.every((a) => a.kind !== 'value' || row.holds[a.column] === true);
}

/**
 * Counts for one batch. A second entry for a row already counted due in the batch (a duplicate
 * record) counts as done: the first one's transition is what it would find.
 */
export function classifyBatch(transition: Transition, entries: readonly ScheduledEntry[], states: EntryStates): VerdictCounts {
  const counts = emptyCounts();
  const dueIds = new Set<string>();
  for (const entry of entries) {
    let verdict = classifyEntry(transition, entry, states.rows.get(entry.id), states.dbNowMs);
    if (verdict === 'due' && dueIds.has(entry.id)) verdict = 'done';
    if (verdict === 'due') dueIds.add(entry.id);
    counts[verdict] += 1;
  }
  return counts;
}

export function emptyCounts(): VerdictCounts {
  return { due: 0, notDue: 0, done: 0, stale: 0 };
}
