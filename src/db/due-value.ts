/**
 * A due column's value as the driver returns it → epoch ms, and the database clock → the value
 * to compare a due column with. The due kind comes from the entities file:
 *   datetime  DATETIME(n) / TIMESTAMP: mysql2 returns a Date (UTC: db/knex.ts sets timezone 'Z'
 *             and the session time_zone '+00:00')
 *   epoch_ms  an integer column of epoch milliseconds (number, or string beyond 2^53)
 *   epoch_s   an integer column of epoch seconds
 * A value that is none of these is corrupt data for this row: a TypeError names it.
 */
import type { DueKind } from '../core/entity-catalogue';

export function dueMsOf(kind: DueKind, value: unknown, what: string): number {
  if (kind === 'datetime') {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.getTime();
    throw new TypeError(`${what}: expected a DATETIME/TIMESTAMP value, got ${describe(value)}`);
  }
  const n = typeof value === 'string' && /^-?[0-9]+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n))
    throw new TypeError(`${what}: expected an integer epoch ${kind === 'epoch_ms' ? 'ms' : 's'}, got ${describe(value)}`);
  return kind === 'epoch_ms' ? n : n * 1000;
}

/**
 * An instant (epoch ms) as the value a column of this kind holds: the bound `due <= ?` compares
 * with for the database clock reading `ms` (epoch_s floors: due in second s is due from s·1000
 * on), a keyset cursor, a `now` assignment.
 */
export function dueValueOf(kind: DueKind, ms: number): Date | number {
  if (kind === 'datetime') return new Date(ms);
  return kind === 'epoch_ms' ? ms : Math.floor(ms / 1000);
}

function describe(v: unknown): string {
  return v === null ? 'null' : v instanceof Date ? 'an invalid Date' : `${typeof v} ${String(v).slice(0, 40)}`;
}
