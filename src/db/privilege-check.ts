/**
 * Whether an account holds what the running service needs (db/service-grants.ts), and nothing
 * more. Needs: each needed privilege is held at some level, globally, on the database, on the
 * table or, for SELECT or UPDATE of a column, on that column. More: any privilege held beyond
 * them (widerPrivileges), which `check` names as problems and `migrate` reports without revoking
 * (it revokes only what it granted: db/apply-service-grants.ts). Pure: the held privileges come
 * from db/sql/read-own-privileges.ts.
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

/** Privileges the account holds beyond the entities file's needs on one object: at which level, on what. */
export type WiderPrivilege = Readonly<{ level: 'global' | 'database' | 'table' | 'column'; privileges: readonly string[]; object: string }>;

/**
 * What the account holds beyond `needed`, at every level, one entry per object. The service needs
 * nothing globally nor on a whole database (every need is a table's or a column's), so any
 * privilege there is wider, except USAGE (no privilege at all); a table's privilege is wider
 * unless that table needs it table-wide; a column's unless that column (or its whole table) needs
 * it. A privilege held on the database or globally lets the account read every column, the
 * personal data too.
 */
/** `allowedGlobal`: global privileges an optional feature in use reads with (service-grants.ts optionalGlobalGrants). */
export function widerPrivileges(needed: readonly TableGrant[], own: OwnPrivileges, database: string, allowedGlobal: readonly string[] = []): WiderPrivilege[] {
  const out = new Map<string, { level: WiderPrivilege['level']; privileges: string[]; object: string }>();
  const add = (level: WiderPrivilege['level'], privilege: string, object: string) => {
    const key = `${level}\u0000${object}`;
    if (!out.has(key)) out.set(key, { level, privileges: [], object });
    out.get(key)!.privileges.push(privilege);
  };
  for (const privilege of own.global) if (privilege !== 'USAGE' && !allowedGlobal.includes(privilege)) add('global', privilege, '*.*');
  for (const g of own.schemaGrants ?? [...own.schema].map((privilege) => ({ schema: database, privilege }))) add('database', g.privilege, `${g.schema}.*`);
  const tableWide = (table: string) => needed.filter((g) => g.table === table).flatMap((g) => g.privileges);
  for (const [table, privileges] of own.tables) for (const p of privileges) if (!tableWide(table).includes(p)) add('table', p, `${database}.${table}`);
  for (const [key, privileges] of own.columns) {
    const [table, column] = [key.slice(0, key.indexOf('.')), key.slice(key.indexOf('.') + 1)];
    const grants = needed.filter((g) => g.table === table);
    const columns = (p: string) => grants.flatMap((g) => (p === 'SELECT' ? (g.selectColumns ?? []) : p === 'UPDATE' ? (g.updateColumns ?? []) : []));
    for (const p of privileges) if (!tableWide(table).includes(p) && !columns(p).includes(column)) add('column', p, `${database}.${table}.${column}`);
  }
  return [...out.values()];
}

/** `SELECT, UPDATE on shop.* (database)`: wider privileges as check and migrate name them. */
export const describeWider = (w: WiderPrivilege): string => `${w.privileges.join(', ')} on ${w.object} (${w.level})`;

/** The REVOKE that takes `w` away from `account` ('user'@'host'), for the DBA to run. */
export function revokeWider(w: WiderPrivilege, account: string): string {
  const quote = (name: string) => `\`${name.replace(/`/g, '``')}\``;
  const parts = w.object.split('.');
  const on = w.level === 'global' ? '*.*' : w.level === 'database' ? `${quote(w.object.slice(0, -2))}.*` : `${quote(parts[0]!)}.${quote(parts[1]!)}`;
  const what = w.level === 'column' ? w.privileges.map((p) => `${p} (${quote(parts.slice(2).join('.'))})`) : w.privileges;
  return `REVOKE ${what.join(', ')} ON ${on} FROM ${account}`;
}
