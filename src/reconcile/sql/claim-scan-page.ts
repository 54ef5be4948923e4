/**
 * Claims the next page of overdue rows for one scanner instance. Inputs: entity, grace period,
 * pause between passes, page size. Output: the page (ids as decimal strings, expire times) and
 * whether it finished the pass.
 *
 * In one short transaction under the entity's scanner_cursors row lock: start a pass if none
 * is running and the last one finished at least `intervalMs` ago (its bound: rows overdue by
 * `graceMs` as of now, by the database clock), read the page after the cursor, move the cursor
 * past it (or close the pass when the page is short). Instances that claim concurrently queue
 * on the row lock and get consecutive pages: a pass is split between them, never repeated.
 *
 * The page is a keyset read of the (status, expire_time, id) index, never OFFSET:
 *   status = ? AND expire_time <= pass_until AND (expire_time, id) > cursor
 * written as an OR of two ranges, which the optimizer reads as index ranges in index order (no
 * filesort; a test checks the plan).
 *
 * Safe to re-run: it only reads rows and moves a cursor. A page claimed by an instance that
 * dies before transitioning it is not lost: its rows stay overdue and the next pass reads them.
 */
import type { Knex } from 'knex';
import type { EntityType } from '../../core/bucket-entry';
import { EXPIRABLE } from '../../core/bucket-entry';
import { bigintString } from '../../db/bigint-string';

export type ScanPage = Readonly<{
  rows: ReadonlyArray<{ id: string; expireAtMs: number }>;
  /** A pass was running (or started) for this claim; false when the scanner should wait. */
  inPass: boolean;
  /** This page ended the pass. */
  passComplete: boolean;
}>;

const TABLES: Readonly<Record<EntityType, string>> = { coupon: 'coupons', order: 'orders' };
const INDEXES: Readonly<Record<EntityType, string>> = { coupon: 'idx_coupons_status_expire_id', order: 'idx_orders_status_expire_id' };

type CursorRow = { pass_until: Date | null; cursor_expire_time: Date | null; cursor_id: number | string | null; last_pass_completed_at: Date | null };

export async function claimScanPage(db: Knex, entity: EntityType, opts: { graceMs: number; intervalMs: number; pageSize: number }): Promise<ScanPage> {
  return db.transaction(async (trx) => {
    await trx.raw('INSERT IGNORE INTO scanner_cursors (entity) VALUES (?)', [entity]);
    // The bound a pass started now would get, read with the cursor: no second round trip.
    const [[cursor]] = (await trx.raw(
      `SELECT pass_until, cursor_expire_time, cursor_id, last_pass_completed_at,
              (last_pass_completed_at IS NULL OR last_pass_completed_at <= NOW(3) - INTERVAL ? MICROSECOND) AS may_start,
              NOW(3) - INTERVAL ? MICROSECOND AS next_until
         FROM scanner_cursors WHERE entity = ? FOR UPDATE`,
      [opts.intervalMs * 1000, opts.graceMs * 1000, entity],
    )) as [[CursorRow & { may_start: number; next_until: Date }]];
    let until = cursor.pass_until;
    if (until === null) {
      if (Number(cursor.may_start) !== 1) return { rows: [], inPass: false, passComplete: false };
      until = cursor.next_until;
      await trx.raw('UPDATE scanner_cursors SET pass_started_at = NOW(3), pass_until = ?, cursor_expire_time = NULL, cursor_id = NULL WHERE entity = ?', [until, entity]);
    }
    const hasCursor = cursor.pass_until !== null && cursor.cursor_expire_time !== null && cursor.cursor_id !== null;
    const [rows] = (await trx.raw(pageSql(entity, hasCursor), [
      EXPIRABLE[entity],
      until,
      ...(hasCursor ? [cursor.cursor_expire_time, cursor.cursor_expire_time, bigintString(cursor.cursor_id!, 'cursor_id')] : []),
      opts.pageSize,
    ])) as [Array<{ id: number | string; expire_time: Date }>];
    const passComplete = rows.length < opts.pageSize;
    const last = rows[rows.length - 1];
    if (passComplete) {
      await trx.raw('UPDATE scanner_cursors SET pass_until = NULL, cursor_expire_time = NULL, cursor_id = NULL, last_pass_completed_at = NOW(3) WHERE entity = ?', [entity]);
    } else {
      await trx.raw('UPDATE scanner_cursors SET cursor_expire_time = ?, cursor_id = ? WHERE entity = ?', [last!.expire_time, bigintString(last!.id, 'id'), entity]);
    }
    return { rows: rows.map((r) => ({ id: bigintString(r.id, 'id'), expireAtMs: r.expire_time.getTime() })), inPass: true, passComplete };
  });
}

/** The page query after a cursor (the one EXPLAIN checks in tests); bindings: status, until, cursor ×3, limit. */
export function scanPageSql(entity: EntityType): string {
  return pageSql(entity, true);
}

function pageSql(entity: EntityType, afterCursor: boolean): string {
  return `SELECT id, expire_time FROM ${TABLES[entity]} FORCE INDEX (${INDEXES[entity]})
    WHERE status = ? AND expire_time <= ? ${afterCursor ? 'AND (expire_time > ? OR (expire_time = ? AND id > ?))' : ''}
    ORDER BY status, expire_time, id LIMIT ?`;
}
