/**
 * Claims the next page of overdue rows of one scan cursor for one scanner instance. Inputs: the
 * cursor (a transition and ONE of its from-values), grace period, pause between passes, page
 * size. Output: the page (ids as decimal strings, due times as epoch ms) and whether it
 * finished the pass.
 *
 * Cursors. A transition with one from-value has one cursor; one with several has a cursor per
 * from-value, each paged separately with `status = ?` (due-keyset.ts: a single index range, in
 * index order, no filesort). The cursor's row in scanner_cursors is keyed (column `entity`):
 *   the entity's first transition, first from-value   <entity>            (coupon: today's rows)
 *   any other transition, first from-value            <entity>.<transition>
 *   the i-th from-value (i ≥ 1)                       <that key>#<i>
 *   a spread entity (a table set, several databases)  <that key>@<database>.<table>, per table
 * Keys are at most 16 + 1 + 16 + 1 + 2 (+ 1 + 16 + 1 + 64) characters: within the column's 160.
 * The cursor rows live on the main database; a page of a table on another database is read
 * there, under the main database's cursor row lock (which is what serialises the claims).
 * Reordering a from-list hands a cursor to another value for the rest of its current pass: the
 * rows before its (due, id) are read by the next pass instead, so nothing is lost (I3).
 *
 * In one short transaction under the cursor's scanner_cursors row lock: start a pass if none is
 * running and the last one finished at least `intervalMs` ago (its bound: rows overdue by
 * `graceMs` as of now, by the database clock, in ms, compared in the due column's kind), read
 * the page after the cursor, move the cursor past it (or close the pass when the page is short).
 * Instances that claim concurrently queue on the row lock and get consecutive pages: a pass is
 * split between them, never repeated. The cursor's due is stored in the DATETIME(3) column
 * `cursor_expire_time` whatever the due kind (an epoch column's value as the instant it names).
 *
 * The page is a keyset read of the (status, due, id) index, never OFFSET:
 *   status = ? AND due <= pass_until AND (due, id) > cursor
 * written as an OR of two ranges, which the optimizer reads as index ranges in index order (no
 * filesort; a test checks the plan).
 *
 * Safe to re-run: it only reads rows and moves a cursor. A page claimed by an instance that
 * dies before transitioning it is not lost: its rows stay overdue and the next pass reads them.
 */
import type { Knex } from 'knex';
import { ConfigError } from '../../core/errors';
import { bigintString } from '../../db/bigint-string';
import { dueValueOf } from '../../db/due-value';
import type { ScanCursor } from '../../core/scan-cursors';
import { afterCursor, cursorBindings, keysetRowOf, keysetShape, KeysetRow, KeysetShape, orderByIndex, selectFrom } from './due-keyset';

export type ScanPage = Readonly<{
  rows: readonly KeysetRow[];
  /** A pass was running (or started) for this claim; false when the scanner should wait. */
  inPass: boolean;
  /** This page ended the pass. */
  passComplete: boolean;
}>;

export type ScanPageOptions = Readonly<{ graceMs: number; intervalMs: number; pageSize: number }>;

type CursorRow = { pass_until: Date | null; cursor_expire_time: Date | null; cursor_id: number | string | null; may_start: number | string; next_until: Date };

/**
 * The claim of one cursor, its SQL built once. `db`: the main database (the cursor rows);
 * `tableDb`: the database of the cursor's table (default: the main one).
 */
export function scanPageClaim(db: Knex, cursor: ScanCursor, opts: ScanPageOptions, tableDb: Knex = db): () => Promise<ScanPage> {
  const shape = keysetShape(cursor.entity, cursor.transition, cursor.location);
  const local = tableDb === db;
  const firstSql = pageSql(shape, false);
  const nextSql = pageSql(shape, true);
  const { key } = cursor;
  return () =>
    db.transaction(async (trx) => {
      await trx.raw('INSERT IGNORE INTO scanner_cursors (entity) VALUES (?)', [key]);
      // The bound a pass started now would get, read with the cursor: no second round trip.
      const [[row]] = (await trx.raw(
        `SELECT pass_until, cursor_expire_time, cursor_id,
                (last_pass_completed_at IS NULL OR last_pass_completed_at <= NOW(3) - INTERVAL ? MICROSECOND) AS may_start,
                NOW(3) - INTERVAL ? MICROSECOND AS next_until
           FROM scanner_cursors WHERE entity = ? FOR UPDATE`,
        [opts.intervalMs * 1000, opts.graceMs * 1000, key],
      )) as [[CursorRow | undefined]];
      // INSERT IGNORE truncates a key too long for an unmigrated column (VARCHAR(16)) instead of failing.
      if (row === undefined) {
        const problem = `scanner_cursors has no row '${key}' after inserting it: the column is too narrow; run \`timebucket migrate\``;
        throw new ConfigError(problem, { problems: [problem] });
      }
      let until = row.pass_until;
      if (until === null) {
        if (Number(row.may_start) !== 1) return { rows: [], inPass: false, passComplete: false };
        until = row.next_until;
        await trx.raw('UPDATE scanner_cursors SET pass_started_at = NOW(3), pass_until = ?, cursor_expire_time = NULL, cursor_id = NULL WHERE entity = ?', [
          until,
          key,
        ]);
      }
      const after: KeysetRow | null =
        row.pass_until !== null && row.cursor_expire_time !== null && row.cursor_id !== null
          ? { id: bigintString(row.cursor_id, 'cursor_id'), expireAtMs: row.cursor_expire_time.getTime() }
          : null;
      // On the main database, in the claim's transaction; elsewhere a plain read of that database.
      const [found] = (await (local ? trx : tableDb).raw(after === null ? firstSql : nextSql, [
        cursor.from,
        dueValueOf(shape.kind, until.getTime()),
        ...(after === null ? [] : cursorBindings(shape, after)),
        opts.pageSize,
      ])) as [Array<Record<string, unknown>>];
      const rows = found.map((r) => keysetRowOf(shape, r));
      const passComplete = rows.length < opts.pageSize;
      const last = rows[rows.length - 1];
      if (passComplete || last === undefined) {
        await trx.raw(
          'UPDATE scanner_cursors SET pass_until = NULL, cursor_expire_time = NULL, cursor_id = NULL, last_pass_completed_at = NOW(3) WHERE entity = ?',
          [key],
        );
      } else {
        await trx.raw('UPDATE scanner_cursors SET cursor_expire_time = ?, cursor_id = ? WHERE entity = ?', [new Date(last.expireAtMs), last.id, key]);
      }
      return { rows, inPass: true, passComplete };
    });
}

/** The page query after a cursor (the one EXPLAIN checks in tests); bindings: status, until, cursor ×3, limit. */
export function scanPageSql(cursor: ScanCursor): string {
  return pageSql(keysetShape(cursor.entity, cursor.transition, cursor.location), true);
}

function pageSql(s: KeysetShape, withCursor: boolean): string {
  return `${selectFrom(s)}
    WHERE ${s.status} = ? AND ${s.due} <= ? ${withCursor ? `AND ${afterCursor(s)}` : ''}
    ${orderByIndex(s)} LIMIT ?`;
}
