/**
 * Retention for event_outbox: deletes one page of rows written before a cutoff. Inputs: cutoff
 * (by the database clock), the cursor after the previous page (null for the first), page size.
 * Output: rows deleted, the cursor for the next page, and whether the pass should go on.
 *
 * Which rows may go is decided by the caller (outbox-retention.ts): older than the retention and
 * than the capture probe's watermark, so a row the connector has not read is never deleted. Pages are read in
 * primary-key order after the cursor (ids grow with insertion, so the oldest rows come first
 * and no secondary index is kept for retention alone), and the page's rows older than the
 * cutoff are deleted by primary key, the cutoff re-checked. The pass ends at the first page
 * that reaches a row at or after the cutoff; a row committed a moment out of id order is
 * deleted by a later pass.
 *
 * Safe to re-run, and to run on several processes at once: a row deleted first by another is
 * simply not deleted again.
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';

/** rows deleted, the cursor for the next page, whether the pass goes on. */
export type PurgePage<C> = Readonly<{ deleted: number; next: C | null; full: boolean }>;
export type EventOutboxCursor = Readonly<{ id: string }>;

/** The page read (EXPLAIN checks its plan in tests); bindings: cursor id, limit. */
export const EVENT_OUTBOX_PAGE_SQL = 'SELECT id, created_at < ? AS old FROM event_outbox WHERE id > ? ORDER BY id LIMIT ?';

export async function purgeEventOutboxPage(db: Knex, cutoff: Date, after: EventOutboxCursor | null, limit: number): Promise<PurgePage<EventOutboxCursor>> {
  const [rows] = (await db.raw(EVENT_OUTBOX_PAGE_SQL, [cutoff, after?.id ?? '0', limit])) as [Array<{ id: number | string; old: number }>];
  const old = rows.filter((r) => Number(r.old) === 1).map((r) => bigintString(r.id, 'event_outbox.id'));
  const last = rows[rows.length - 1];
  if (last === undefined) return { deleted: 0, next: after, full: false };
  let deleted = 0;
  if (old.length > 0) {
    const [result] = (await db.raw('DELETE FROM event_outbox WHERE id IN (?) AND created_at < ?', [old, cutoff])) as [{ affectedRows: number }];
    deleted = result.affectedRows;
  }
  // Go on only while the whole page was old: past the first young row, the rest is younger still.
  return { deleted, next: { id: bigintString(last.id, 'event_outbox.id') }, full: rows.length === limit && old.length === rows.length };
}

/** The database clock's now minus `ageMs`: rows written before it may go. */
export async function purgeCutoff(db: Knex, ageMs: number): Promise<Date> {
  const [[row]] = (await db.raw('SELECT NOW(3) - INTERVAL ? MICROSECOND AS cutoff', [Math.round(ageMs * 1000)])) as [[{ cutoff: Date }]];
  return row.cutoff;
}
