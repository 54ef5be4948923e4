/**
 * Backfill's read: the rows in their expirable state (coupon ACTIVE, order UNPAID) with
 * expire_time in [since, until), a page at a time after a keyset cursor, in index order. A plain
 * read (no locks, READ COMMITTED): backfill only schedules reminders, and a row that changes
 * after being read produces its own CDC change, so a stale read costs at most a no-op entry.
 *
 * The page is a range of the (status, expire_time, id) index, never OFFSET, written like the
 * scanner's (sql/claim-scan-page.ts): the cursor as an OR of two ranges, forced onto the index.
 */
import type { Knex } from 'knex';
import { EntityType, EXPIRABLE } from '../../core/bucket-entry';
import { bigintString } from '../../db/bigint-string';

export type ExpirableRow = Readonly<{ id: string; expireAtMs: number }>;
/** The last row of the previous page; rows after it in (expire_time, id) order come next. */
export type KeysetCursor = Readonly<{ expireAt: Date; id: string }>;
export type TimeWindow = Readonly<{ since?: Date; until?: Date }>;

const TABLES: Readonly<Record<EntityType, string>> = { coupon: 'coupons', order: 'orders' };
const INDEXES: Readonly<Record<EntityType, string>> = { coupon: 'idx_coupons_status_expire_id', order: 'idx_orders_status_expire_id' };

export async function readExpirablePage(db: Knex, entity: EntityType, window: TimeWindow, cursor: KeysetCursor | null, limit: number): Promise<ExpirableRow[]> {
  const { where, bindings } = bounds(entity, window);
  const after = cursor === null ? '' : 'AND (expire_time > ? OR (expire_time = ? AND id > ?))';
  const [rows] = (await db.raw(
    `SELECT id, expire_time FROM ${TABLES[entity]} FORCE INDEX (${INDEXES[entity]})
      WHERE ${where} ${after} ORDER BY status, expire_time, id LIMIT ?`,
    [...bindings, ...(cursor === null ? [] : [cursor.expireAt, cursor.expireAt, cursor.id]), limit],
  )) as [Array<{ id: unknown; expire_time: Date }>];
  return rows.map((r) => ({ id: bigintString(r.id, 'id'), expireAtMs: r.expire_time.getTime() }));
}

/** How many rows the window holds now: the progress bar's total (an index-only range count). */
export async function countExpirable(db: Knex, entity: EntityType, window: TimeWindow): Promise<number> {
  const { where, bindings } = bounds(entity, window);
  const [[row]] = (await db.raw(`SELECT COUNT(*) AS n FROM ${TABLES[entity]} FORCE INDEX (${INDEXES[entity]}) WHERE ${where}`, bindings)) as [[{ n: number | string }]];
  return Number(row.n);
}

function bounds(entity: EntityType, window: TimeWindow): { where: string; bindings: Knex.RawBinding[] } {
  const clauses = ['status = ?'];
  const bindings: Knex.RawBinding[] = [EXPIRABLE[entity]];
  if (window.since !== undefined) {
    clauses.push('expire_time >= ?');
    bindings.push(window.since);
  }
  if (window.until !== undefined) {
    clauses.push('expire_time < ?');
    bindings.push(window.until);
  }
  return { where: clauses.join(' AND '), bindings };
}
