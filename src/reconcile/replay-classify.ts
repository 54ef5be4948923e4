/**
 * What a bucket entry means against its row as it is now, read without locks: the explanation
 * side of a replay. Pure. The rules are planExpiry's (core/expiry-plan.ts), so a dry run
 * predicts what the expiry transaction would do, plus one distinction the transaction does not
 * need: among the entries it would skip, those it already carried out.
 *
 *   due     expirable, its time not pushed past the entry's, due by the database clock
 *   notDue  expirable, not pushed past the entry's time, but not yet due (I2: left alone)
 *   done    already transitioned by timebucket for this very due time (EXPIRED / CANCELLED
 *           by TIMEOUT with the entry's expire_time): its event_key is the entry's
 *   stale   anything else: paid, used, locked, revoked, extended (a later expire_time: a newer
 *           entry covers it), transitioned for another due time, or deleted
 */
import { EXPIRABLE, type EntityType } from '../core/bucket-entry';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { EntryRowState, EntryStates } from './sql/read-entry-states';

export type Verdict = 'due' | 'notDue' | 'done' | 'stale';
export type VerdictCounts = Record<Verdict, number>;

const TRANSITIONED: Readonly<Record<EntityType, string>> = { coupon: 'EXPIRED', order: 'CANCELLED' };

export function classifyEntry(entity: EntityType, entry: ScheduledEntry, row: EntryRowState | undefined, dbNowMs: number): Verdict {
  if (row === undefined) return 'stale';
  if (row.status === EXPIRABLE[entity]) {
    if (row.expireAtMs > entry.expireAtMs) return 'stale';
    return row.expireAtMs > dbNowMs ? 'notDue' : 'due';
  }
  const ours = row.status === TRANSITIONED[entity] && (entity === 'coupon' || row.cancelReason === 'TIMEOUT');
  return ours && row.expireAtMs === entry.expireAtMs ? 'done' : 'stale';
}

/**
 * Counts for one batch. A second entry for a row already counted due in the batch (a duplicate
 * record) counts as done: the first one's transition is what it would find.
 */
export function classifyBatch(entity: EntityType, entries: readonly ScheduledEntry[], states: EntryStates): VerdictCounts {
  const counts = emptyCounts();
  const dueIds = new Set<string>();
  for (const entry of entries) {
    let verdict = classifyEntry(entity, entry, states.rows.get(entry.id), states.dbNowMs);
    if (verdict === 'due' && dueIds.has(entry.id)) verdict = 'done';
    if (verdict === 'due') dueIds.add(entry.id);
    counts[verdict] += 1;
  }
  return counts;
}

export function emptyCounts(): VerdictCounts {
  return { due: 0, notDue: 0, done: 0, stale: 0 };
}
