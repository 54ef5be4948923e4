/**
 * A reminder's row from mysql2's values: the id exact, the status typed, the due time in epoch
 * ms, and the event's columns as an event carries them (expire/row-values.ts, as the expiry's
 * locking read).
 */
import type { Knex } from 'knex';
import type { Entity, Location, Transition } from '../../core/entity-catalogue';
import type { ColumnValue, RemindedRow } from '../../core/events';
import { bigintString } from '../../db/bigint-string';
import { dueMsOf } from '../../db/due-value';
import { columnValueOf, fieldTypes, statusValueOf, type FieldInfo } from '../row-values';

export type ReadRemindedRows<Key> = Readonly<{
  sql: string;
  run: (trx: Knex.Transaction, keys: Key) => Promise<RemindedRow[]>;
}>;

export function remindedRowsOf(entity: Entity, t: Transition, location: Location, columns: readonly string[]): (rows: ReadonlyArray<Record<string, unknown>>, fields: unknown) => RemindedRow[] {
  const at = (column: string): string => `${location.key}.${column}`;
  const [idAt, statusAt, dueAt] = [at(entity.idColumn), at(entity.status.column), at(t.due.column)];
  return (rows, fields) => {
    const types = fieldTypes(fields as FieldInfo[] | undefined);
    const typed = columns.map((c) => [c, types.get(c), at(c)] as const);
    return rows.map((r) => {
      const values: Record<string, ColumnValue> = {};
      for (const [c, type, what] of typed) values[c] = columnValueOf(r[c], type, what);
      return {
        id: bigintString(r[entity.idColumn], idAt),
        status: statusValueOf(r[entity.status.column], entity.status.type, statusAt),
        dueAtMs: dueMsOf(t.due.kind, r[t.due.column], dueAt),
        columns: values,
      };
    });
  };
}
