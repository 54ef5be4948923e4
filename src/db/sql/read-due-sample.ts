/**
 * A bounded sample of one transition's due column in one table: the values of the rows in one
 * from-state at both ends of the (status, due, id) index, `perEnd` of each (the lowest due
 * times and the highest). Inputs: the table, the transition, the from-value, perEnd. Output:
 * the due values as the driver returns them, each row once (ids deduplicate the two ends of a
 * small table).
 *
 * Why the two ends: the rows that matter are those that could transition (the from-state's),
 * and whether ALL of them read as 1970 or as centuries ahead is decided by the lowest and the
 * highest. Both are index ranges read in index order (forward and backward) on MySQL 8+ and
 * MariaDB, at most 2·perEnd index entries, whatever the table's size. Safe to re-run: a plain
 * read, no locks.
 */
import type { Knex } from 'knex';
import type { Entity, Location, StatusValue, Transition } from '../../core/entity-catalogue';
import { quoteId } from '../quote-id';

export async function readDueSample(
  db: Knex,
  entity: Entity,
  transition: Transition,
  location: Location,
  from: StatusValue,
  perEnd: number,
): Promise<unknown[]> {
  const [table, index, id, status, due] = [location.table, transition.index, entity.idColumn, entity.status.column, transition.due.column].map(quoteId);
  const end = (order: 'ASC' | 'DESC') =>
    `(SELECT ${id} AS id, ${due} AS due FROM ${table} FORCE INDEX (${index}) WHERE ${status} = ? AND ${due} IS NOT NULL ORDER BY ${status} ${order}, ${due} ${order}, ${id} ${order} LIMIT ?)`;
  const [rows] = (await db.raw(`${end('ASC')} UNION ALL ${end('DESC')}`, [from, perEnd, from, perEnd])) as [Array<{ id: unknown; due: unknown }>];
  const byId = new Map<string, unknown>();
  for (const r of rows) byId.set(String(r.id), r.due);
  return [...byId.values()];
}
