/**
 * The SQL pieces the scanner's and backfill's keyset pages share, generated from one transition
 * of one entity: its table, its (status, due, id) index and the quoted columns, and how a page
 * row becomes an entry. Every identifier is quoted (db/quote-id.ts); every value is bound.
 *
 * A page is always for ONE status value: `status = ?` keeps the read a single range of the
 * (status, due, id) index, so ORDER BY status, due, id is index order (no filesort). A from-set
 * of several values is read one value at a time: `status IN (a, b) ... ORDER BY due, id` would
 * interleave two ranges and need a sort, and ordering by status first would need the status in
 * the cursor.
 *
 * The cursor (due, id) of the last row read is "after" as an OR of two ranges,
 *   due > ? OR (due = ? AND id > ?)
 * which both MySQL and MariaDB read as index ranges in index order. Its due is the row's own
 * value converted to ms and back (exact for every due kind: DATETIME(3), epoch ms, epoch s).
 */
import type { Knex } from 'knex';
import type { DueKind, Entity, Location, Transition } from '../../core/entity-catalogue';
import { bigintString } from '../../db/bigint-string';
import { dueMsOf, dueValueOf } from '../../db/due-value';
import { quoteId } from '../../db/quote-id';

export type KeysetShape = Readonly<{
  ref: string;
  kind: DueKind;
  /** Quoted identifiers. */
  table: string;
  index: string;
  id: string;
  status: string;
  due: string;
  /** Unquoted names, to read the driver's rows. */
  idColumn: string;
  dueColumn: string;
  /** Backfill's pages of a transition with digests also read the user column (its raw value). */
  userColumn?: string;
}>;

/** One page row: the id as an exact decimal string, the due column as epoch ms; `user` as the driver read it. */
export type KeysetRow = Readonly<{ id: string; expireAtMs: number; user?: unknown }>;

/**
 * `location`: the table of the entity the pages read (one table per cursor). `withUser`: also
 * read the digest's user column, which costs the index-only read a row lookup per row.
 */
export function keysetShape(entity: Entity, transition: Transition, location: Location, opts: { withUser?: boolean } = {}): KeysetShape {
  if (entity.name !== transition.entity) throw new RangeError(`transition ${transition.ref} is not one of ${entity.name}'s`);
  const userColumn = opts.withUser === true ? transition.reminders?.digest?.userColumn : undefined;
  return {
    ref: transition.ref,
    kind: transition.due.kind,
    table: quoteId(location.table),
    index: quoteId(transition.index),
    id: quoteId(entity.idColumn),
    status: quoteId(entity.status.column),
    due: quoteId(transition.due.column),
    idColumn: entity.idColumn,
    dueColumn: transition.due.column,
    ...(userColumn !== undefined && { userColumn }),
  };
}

/** `SELECT id, due FROM table FORCE INDEX (index)`: the head of every page read. */
export function selectFrom(s: KeysetShape): string {
  const user = s.userColumn === undefined || s.userColumn === s.idColumn || s.userColumn === s.dueColumn ? '' : `, ${quoteId(s.userColumn)}`;
  return `SELECT ${s.id}, ${s.due}${user} FROM ${s.table} FORCE INDEX (${s.index})`;
}

/** After the cursor in (due, id) order; bindings: cursorBindings. */
export function afterCursor(s: KeysetShape): string {
  return `(${s.due} > ? OR (${s.due} = ? AND ${s.id} > ?))`;
}

export function cursorBindings(s: KeysetShape, cursor: KeysetRow): Knex.RawBinding[] {
  const due = dueValueOf(s.kind, cursor.expireAtMs);
  return [due, due, cursor.id];
}

export function orderByIndex(s: KeysetShape): string {
  return `ORDER BY ${s.status}, ${s.due}, ${s.id}`;
}

export function keysetRowOf(s: KeysetShape, r: Record<string, unknown>): KeysetRow {
  const row = { id: bigintString(r[s.idColumn], `${s.ref} id`), expireAtMs: dueMsOf(s.kind, r[s.dueColumn], `${s.ref} ${s.dueColumn}`) };
  return s.userColumn === undefined ? row : { ...row, user: r[s.userColumn] };
}
