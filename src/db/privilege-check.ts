/**
 * Whether an account holds what the running service needs (db/service-grants.ts): each needed
 * privilege is held at some level, globally, on the database, on the table or, for SELECT or
 * UPDATE of a column, on that column. Pure: the held privileges come from db/sql/read-own-privileges.ts.
 */
import type { OwnPrivileges } from './sql/read-own-privileges';
import type { TableGrant } from './service-grants';

export function missingPrivileges(needed: readonly TableGrant[], own: OwnPrivileges, database: string): string[] {
  const holds = (privilege: string, table: string, column?: string) =>
    own.global.has(privilege) ||
    own.global.has('ALL PRIVILEGES') ||
    own.schema.has(privilege) ||
    own.schema.has('ALL PRIVILEGES') ||
    (own.tables.get(table)?.has(privilege) ?? false) ||
    (column !== undefined && (own.columns.get(`${table}.${column}`)?.has(privilege) ?? false));
  const missing: string[] = [];
  for (const g of needed) {
    const lacks = g.privileges.filter((p) => !holds(p, g.table));
    if (lacks.length > 0) missing.push(`${lacks.join(', ')} on ${database}.${g.table}`);
    for (const [privilege, wanted] of [
      ['SELECT', g.selectColumns],
      ['UPDATE', g.updateColumns],
    ] as const) {
      const columns = (wanted ?? []).filter((c) => !holds(privilege, g.table, c));
      if (columns.length > 0) missing.push(`${privilege} (${columns.join(', ')}) on ${database}.${g.table}`);
    }
  }
  return missing;
}
