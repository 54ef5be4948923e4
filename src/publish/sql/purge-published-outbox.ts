/**
 * Retention: deletes one keyset page of rows published before a cutoff. Inputs: cutoff (by the
 * database clock), the cursor after the previous page (null for the first), page size. Output:
 * rows deleted, the cursor for the next page, and whether a full page was read (more may follow).
 *
 * The page is read from idx_outbox_unpublished (published_at, id), the relay's own index: rows
 * published before the cutoff are its oldest non-NULL range, read in index order after the
 * cursor, never OFFSET and never from the start again, so a pass does not re-read the entries
 * of rows it deleted (InnoDB purges them later). Then the page is deleted by primary key: a
 * short autocommit statement that locks only those rows, never a range the relays or the
 * expirers write to. Unpublished rows (published_at NULL) are never read or deleted.
 *
 * Safe to re-run, and to run on several relays at once: a row another instance deleted first is
 * simply not deleted again; the cutoff is re-checked by the DELETE.
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';

export type PurgeCursor = Readonly<{ publishedAt: Date; id: string }>;
export type PurgePage<C = PurgeCursor> = Readonly<{ deleted: number; next: C | null; full: boolean }>;

/** The page read after a cursor (EXPLAIN checks its plan in tests); bindings: cutoff, cursor ×3, limit. */
export function purgePageSql(afterCursor: boolean): string {
  return `SELECT id, published_at FROM outbox FORCE INDEX (idx_outbox_unpublished)
    WHERE published_at < ? ${afterCursor ? 'AND (published_at > ? OR (published_at = ? AND id > ?))' : ''}
    ORDER BY published_at, id LIMIT ?`;
}

/** The database clock's now minus the retention: rows published before it may go. */
export async function purgeCutoff(db: Knex, retentionMs: number): Promise<Date> {
  const [[row]] = (await db.raw('SELECT NOW(3) - INTERVAL ? MICROSECOND AS cutoff', [Math.round(retentionMs * 1000)])) as [[{ cutoff: Date }]];
  return row.cutoff;
}

export async function purgePublishedPage(db: Knex, cutoff: Date, after: PurgeCursor | null, limit: number): Promise<PurgePage> {
  const [rows] = (await db.raw(purgePageSql(after !== null), [
    cutoff,
    ...(after !== null ? [after.publishedAt, after.publishedAt, after.id] : []),
    limit,
  ])) as [Array<{ id: number | string; published_at: Date }>];
  const last = rows[rows.length - 1];
  if (last === undefined) return { deleted: 0, next: after, full: false };
  const [result] = (await db.raw('DELETE FROM outbox WHERE id IN (?) AND published_at < ?', [
    rows.map((r) => bigintString(r.id, 'outbox.id')),
    cutoff,
  ])) as [{ affectedRows: number }];
  return { deleted: result.affectedRows, next: { publishedAt: last.published_at, id: bigintString(last.id, 'outbox.id') }, full: rows.length === limit };
}
