/**
 * Backfill's read: the rows of one transition in one of its from-states with the due column in
 * [since, until), a page at a time after a keyset cursor, in index order; and the count of the
 * window for the progress bar. Inputs: the entity and transition (their table, index, columns
 * and values from the entities file), the window, the cursor, the page size. Output: ids as
 * exact decimal strings, due times as epoch ms, and for a transition with digests the user
 * column as the driver read it (the page then looks each row up: the index lacks it).
 *
 * A plain read (no locks, READ COMMITTED): backfill only schedules reminders, and a row that
 * changes after being read produces its own CDC change, so a stale read costs at most a no-op
 * entry. Safe to re-run: it changes nothing.
 *
 * The page is a range of the (status, due, id) index for ONE from-value, never OFFSET, written
 * like the scanner's (due-keyset.ts): the cursor as an OR of two ranges, forced onto the index.
 * The window's instants are compared in the due column's kind: a Date for datetime, epoch ms,
 * or epoch seconds rounded UP for both bounds (a row at second s is the instant s × 1000, inside
 * [since, until) exactly when s ≥ ⌈since/1000⌉ and s < ⌈until/1000⌉).
 */
import type { Knex } from 'knex';
import type { DueKind, Entity, Location, StatusValue, Transition } from '../../core/entity-catalogue';
import { dueValueOf } from '../../db/due-value';
import { afterCursor, cursorBindings, keysetRowOf, keysetShape, KeysetRow, KeysetShape, orderByIndex, selectFrom } from './due-keyset';

export type ExpirableRow = KeysetRow;
/** The last row of the previous page; rows after it in (due, id) order come next. */
export type KeysetCursor = KeysetRow;
export type TimeWindow = Readonly<{ since?: Date; until?: Date }>;

export type ExpirableReads = Readonly<{
  /** Rows of the window in any from-state now (an index-only range count). */
  count: (window: TimeWindow) => Promise<number>;
  readPage: (from: StatusValue, window: TimeWindow, cursor: KeysetCursor | null, limit: number) => Promise<ExpirableRow[]>;
}>;

export type Query = Readonly<{ sql: string; bindings: Knex.RawBinding[] }>;

export function expirableReads(db: Knex, entity: Entity, transition: Transition, location: Location): ExpirableReads {
  // Reminders are scheduled from these rows too; a digest's needs the row's user.
  const shape = keysetShape(entity, transition, location, { withUser: true });
  return {
    count: async (window) => {
      const q = countQuery(shape, transition.from, window);
      const [[row]] = (await db.raw(q.sql, q.bindings)) as [[{ n: number | string }]];
      return Number(row.n);
    },
    readPage: async (from, window, cursor, limit) => {
      const q = pageQuery(shape, from, window, cursor, limit);
      const [rows] = (await db.raw(q.sql, q.bindings)) as [Array<Record<string, unknown>>];
      return rows.map((r) => keysetRowOf(shape, r));
    },
  };
}

/** The page read (exported for its unit test and the plan check). */
export function pageQuery(s: KeysetShape, from: StatusValue, window: TimeWindow, cursor: KeysetCursor | null, limit: number): Query {
  const w = windowClauses(s, window);
  return {
    sql: `${selectFrom(s)} WHERE ${s.status} = ?${w.sql}${cursor === null ? '' : ` AND ${afterCursor(s)}`} ${orderByIndex(s)} LIMIT ?`,
    bindings: [from, ...w.bindings, ...(cursor === null ? [] : cursorBindings(s, cursor)), limit],
  };
}

export function countQuery(s: KeysetShape, from: readonly StatusValue[], window: TimeWindow): Query {
  const w = windowClauses(s, window);
  const values = from.map(() => '?').join(', ');
  return { sql: `SELECT COUNT(*) AS n FROM ${s.table} FORCE INDEX (${s.index}) WHERE ${s.status} IN (${values})${w.sql}`, bindings: [...from, ...w.bindings] };
}

function windowClauses(s: KeysetShape, window: TimeWindow): Query {
  let sql = '';
  const bindings: Knex.RawBinding[] = [];
  if (window.since !== undefined) {
    sql += ` AND ${s.due} >= ?`;
    bindings.push(windowBound(s.kind, window.since.getTime()));
  } else {
    // A row without a due time has nothing to schedule; NULLs sort first in the index, so this
    // keeps the page a range of it.
    sql += ` AND ${s.due} IS NOT NULL`;
  }
  if (window.until !== undefined) {
    sql += ` AND ${s.due} < ?`;
    bindings.push(windowBound(s.kind, window.until.getTime()));
  }
  return { sql, bindings };
}

/** An instant as a bound of `due >= ?` / `due < ?`: seconds round up (see the header). */
export function windowBound(kind: DueKind, ms: number): Date | number {
  return kind === 'epoch_s' ? Math.ceil(ms / 1000) : dueValueOf(kind, ms);
}
