/**
 * The SET list of a transition's (or an effect's) guarded UPDATE: the status first, then the
 * file's assignments in file order. Identifiers are quoted (quoteId); every value is bound, so
 * the text is fixed per transition and built once.
 *
 *   value      `col` = ?            the constant (NULL included)
 *   now        `col` = ?            the database clock read in this transaction (I2), as the
 *                                   column holds an instant: a Date for DATETIME, ms or s for epochs
 *   increment  `col` = `col` + ?    the step
 */
import type { Assignment, StatusValue } from '../core/entity-catalogue';
import { dueValueOf } from '../db/due-value';
import { quoteId } from '../db/quote-id';

export type SetClause = Readonly<{
  sql: string;
  /** The bindings of `sql`, in order, for a transaction whose database clock reads `dbNowMs`. */
  values: (dbNowMs: number) => unknown[];
}>;

export function setClause(statusColumn: string, to: StatusValue, set: readonly Assignment[]): SetClause {
  const parts = [
    `${quoteId(statusColumn)} = ?`,
    ...set.map((a) => (a.kind === 'increment' ? `${quoteId(a.column)} = ${quoteId(a.column)} + ?` : `${quoteId(a.column)} = ?`)),
  ];
  return {
    sql: parts.join(', '),
    values: (dbNowMs) => [to, ...set.map((a) => (a.kind === 'value' ? a.value : a.kind === 'now' ? dueValueOf(a.unit, dbNowMs) : a.by))],
  };
}
