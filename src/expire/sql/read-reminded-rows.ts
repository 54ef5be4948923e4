/**
 * The rows a batch of reminders names, read by primary key without a lock: a reminder changes
 * no row, so it takes none. Only rows still in a from-state come back; the caller compares each
 * one's due time with its entry's (core/reminder-plan.ts).
 *
 *   SELECT id, status, due, <event columns> FROM t WHERE id IN (…) AND status IN (from…)
 *     AND due IS NOT NULL
 */
import type { Knex } from 'knex';
import type { Entity, Location, Transition } from '../../core/entity-catalogue';
import type { ReadRow } from '../../core/expiry-plan';
import { quoteId } from '../../db/quote-id';
import { rowsDecoder, type FieldInfo } from '../row-values';

export type ReadRemindedRows = Readonly<{
  sql: string;
  run: (trx: Knex.Transaction, ids: readonly string[]) => Promise<ReadRow[]>;
}>;

export function readRemindedRows(entity: Entity, t: Transition, location: Location, columns: readonly string[]): ReadRemindedRows {
  const select = [...new Set([entity.idColumn, entity.status.column, t.due.column, ...columns])].map(quoteId).join(', ');
  const id = quoteId(entity.idColumn);
  const sql = `SELECT ${select} FROM ${quoteId(location.table)} FORCE INDEX (PRIMARY) WHERE ${id} IN (?) AND ${quoteId(entity.status.column)} IN (?) AND ${quoteId(t.due.column)} IS NOT NULL`;
  const decode = rowsDecoder(entity, t, location, columns);
  return {
    sql,
    run: async (trx, ids) => {
      if (ids.length === 0) return [];
      const [rows, fields] = (await trx.raw(sql, [[...ids], [...t.from]] as Knex.RawBinding[])) as [Array<Record<string, unknown>>, FieldInfo[] | undefined];
      return decode(rows, fields);
    },
  };
}
