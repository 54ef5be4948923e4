/**
 * Whether one table holds any of an entity's declared status values (core/status-codes-check.ts).
 * Inputs: the table, the status column, an index starting with it (a transition's (status,
 * due, id) index), the declared values. Output: whether the table has rows, whether any row
 * holds a declared value, and, only when none does, the distinct codes of up to SAMPLE rows for
 * the message.
 *
 * Each read stops at its first row (EXISTS) or at SAMPLE rows: bounded whatever the table's size.
 * Safe to re-run: plain reads, no locks.
 */
import type { Knex } from 'knex';
import type { Entity, Location, StatusValue } from '../../core/entity-catalogue';
import { quoteId } from '../quote-id';

const SAMPLE = 200;

export type StatusPresenceRead = Readonly<{ hasRows: boolean; anyDeclaredHeld: boolean; held: readonly unknown[] }>;

export async function readStatusPresence(
  db: Knex,
  entity: Entity,
  location: Location,
  index: string,
  declared: readonly StatusValue[],
): Promise<StatusPresenceRead> {
  const [table, status, idx] = [location.table, entity.status.column, index].map(quoteId);
  const [[row]] = (await db.raw(
    `SELECT EXISTS (SELECT 1 FROM ${table}) AS has_rows, EXISTS (SELECT 1 FROM ${table} FORCE INDEX (${idx}) WHERE ${status} IN (${declared.map(() => '?').join(', ')})) AS known`,
    [...declared],
  )) as [[{ has_rows: number | string; known: number | string }]];
  const hasRows = Number(row.has_rows) === 1;
  const anyDeclaredHeld = Number(row.known) === 1;
  if (!hasRows || anyDeclaredHeld) return { hasRows, anyDeclaredHeld, held: [] };
  const [rows] = (await db.raw(`SELECT DISTINCT s FROM (SELECT ${status} AS s FROM ${table} LIMIT ${SAMPLE}) AS sample ORDER BY s`)) as [Array<{ s: unknown }>];
  return { hasRows, anyDeclaredHeld, held: rows.map((r) => r.s) };
}
