/**
 * The two bounded counts of the first-pass guard (core/first-pass-guard.ts) for one transition
 * in one table: rows in the given from-states with a due time at or before `dueBound` (the
 * database clock in the column's kind), up to `dueCap`; and, only when there are enough of those
 * to matter, the rows not yet due, up to what would bring the share within the limit. Inputs:
 * the table, the transition, the from-states, the bound, the limits. Output: the counts.
 *
 * Each is a COUNT over a LIMITed derived table of the (status, due, id) index: index ranges,
 * at most its LIMIT entries read, whatever the table's size (MySQL 8+ and MariaDB alike).
 * Safe to re-run: plain reads, no locks.
 */
import type { Knex } from 'knex';
import type { Entity, Location, StatusValue, Transition } from '../../core/entity-catalogue';
import { dueCountCap, notDueBound, type FirstPassLimits } from '../../core/first-pass-guard';
import { quoteId } from '../quote-id';

export type FirstPassRead = Readonly<{ due: number; dueCapped: boolean; notDue: number }>;

export async function countFirstPass(
  db: Knex,
  entity: Entity,
  transition: Transition,
  location: Location,
  from: readonly StatusValue[],
  dueBound: Date | number,
  limits: FirstPassLimits,
): Promise<FirstPassRead> {
  const [table, index, status, due] = [location.table, transition.index, entity.status.column, transition.due.column].map(quoteId);
  const states = from.map(() => '?').join(', ');
  const count = async (comparison: '<=' | '>', cap: number): Promise<number> => {
    const [[row]] = (await db.raw(
      `SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM ${table} FORCE INDEX (${index}) WHERE ${status} IN (${states}) AND ${due} ${comparison} ? LIMIT ?) AS bounded`,
      [...from, dueBound, cap],
    )) as [[{ n: number | string }]];
    return Number(row.n);
  };
  const cap = dueCountCap(limits);
  const dueRows = await count('<=', cap);
  // Below the minimum the share does not matter: no second read.
  const notDue = dueRows < limits.minDueRows ? 0 : await count('>', notDueBound(dueRows, limits.maxDueShare));
  return { due: dueRows, dueCapped: dueRows >= cap, notDue };
}
