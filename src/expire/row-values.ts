/**
 * Values of a locked row, as mysql2 returns them, → the values the plan and the event carry.
 * The column's type comes from the result's field metadata, because the value alone cannot
 * tell: with `supportBigNumbers` (db/knex.ts) a BIGINT below 2^53 arrives as a number, just as
 * an INT does, yet a BIGINT is always carried as its exact decimal string (core/events.ts).
 *
 *   BIGINT                      → exact decimal string (db/bigint-string.ts)
 *   DATETIME, TIMESTAMP, DATE   → epoch ms (a Date in UTC: db/knex.ts)
 *   other numbers, strings      → as they are (DECIMAL is mysql2's exact string)
 *   NULL                        → null
 * Anything else (a BLOB's Buffer, a JSON object) cannot go into an event: a TypeError names the
 * column, and the batch fails deterministically (tried alone, then parked).
 */
import type { Entity, Location, StatusType, StatusValue, Transition } from '../core/entity-catalogue';
import type { ColumnValue } from '../core/events';
import type { ReadRow } from '../core/expiry-plan';
import { bigintString } from '../db/bigint-string';
import { dueMsOf } from '../db/due-value';

/** The part of mysql2's FieldPacket this needs. */
export type FieldInfo = Readonly<{ name: string; columnType?: number; type?: number }>;

// mysql2's type codes (mysql2/lib/constants/types.js)
const LONGLONG = 0x08;
const TEMPORAL: ReadonlySet<number> = new Set([
  0x07 /* TIMESTAMP */, 0x0a /* DATE */, 0x0c /* DATETIME */, 0x0e /* NEWDATE */, 0x11 /* TIMESTAMP2 */, 0x12 /* DATETIME2 */,
]);

export function fieldTypes(fields: readonly FieldInfo[] | undefined): ReadonlyMap<string, number | undefined> {
  return new Map((fields ?? []).map((f) => [f.name, f.columnType ?? f.type]));
}

export function columnValueOf(value: unknown, type: number | undefined, what: string): ColumnValue {
  if (value === null || value === undefined) return null;
  if (type === LONGLONG) return bigintString(value, what);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError(`${what}: an invalid date (a zero DATETIME?)`);
    return value.getTime();
  }
  if (type !== undefined && TEMPORAL.has(type)) throw new TypeError(`${what}: expected a Date, got ${typeof value}`);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'bigint') return String(value);
  throw new TypeError(`${what}: a ${Buffer.isBuffer(value) ? 'binary' : typeof value} value cannot be carried by an event`);
}

/** A status as the catalogue types it, so it compares with the file's values like with like (the expiry's lock, replay's read). */
export function statusValueOf(value: unknown, type: StatusType, what: string): StatusValue {
  if (type === 'string') {
    if (typeof value === 'string') return value;
  } else {
    const n = typeof value === 'string' && /^-?[0-9]+$/.test(value) ? Number(value) : value;
    if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
  }
  throw new TypeError(`${what}: expected ${type === 'integer' ? 'an integer' : 'a string'} status, got ${value === null ? 'null' : typeof value}`);
}

/**
 * The rows of a batch's read from mysql2's values (the expiry's locking read, a reminder's read):
 * the id exact, the status typed, the due time in epoch ms, and `columns` as an event carries
 * them. The names for the errors of a bad value are made once: a batch decodes thousands of rows.
 */
export function rowsDecoder(
  entity: Entity,
  t: Transition,
  location: Location,
  columns: readonly string[],
): (rows: ReadonlyArray<Record<string, unknown>>, fields: readonly FieldInfo[] | undefined) => ReadRow[] {
  const at = (column: string): string => `${location.key}.${column}`;
  const [idAt, statusAt, dueAt] = [at(entity.idColumn), at(entity.status.column), at(t.due.column)];
  return (rows, fields) => {
    const types = fieldTypes(fields);
    const typed = columns.map((c) => [c, types.get(c), at(c)] as const);
    return rows.map((r) => {
      const values: Record<string, ColumnValue> = {};
      for (const [c, type, what] of typed) values[c] = columnValueOf(r[c], type, what);
      return {
        id: bigintString(r[entity.idColumn], idAt),
        status: statusValueOf(r[entity.status.column], entity.status.type, statusAt),
        expireAtMs: dueMsOf(t.due.kind, r[t.due.column], dueAt),
        columns: values,
      };
    });
  };
}
