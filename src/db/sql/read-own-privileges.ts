/**
 * The privileges of the account this connection runs as, as information_schema lists them for
 * the current user (on MySQL 8 and MariaDB alike, without any privilege on the mysql schema).
 * Inputs: the database. Output: the privileges held globally, on the database, per table and per
 * column. Safe to re-run: plain reads. Privileges that reach the account only through a role
 * that is not active are not listed here (MySQL 8 roles): `check` then reports them missing.
 */
import type { Knex } from 'knex';

export type OwnPrivileges = Readonly<{
  global: ReadonlySet<string>;
  schema: ReadonlySet<string>;
  /** table → privileges */
  tables: ReadonlyMap<string, ReadonlySet<string>>;
  /** `table.column` → privileges */
  columns: ReadonlyMap<string, ReadonlySet<string>>;
}>;

// CURRENT_USER() is user@host; information_schema writes the grantee as 'user'@'host'.
const GRANTEE = "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')";

export async function readOwnPrivileges(db: Knex, database: string): Promise<OwnPrivileges> {
  type Row = { p: string; t?: string; c?: string };
  const [global] = (await db.raw(`SELECT PRIVILEGE_TYPE AS p FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ${GRANTEE}`)) as [Row[]];
  const [schema] = (await db.raw(`SELECT PRIVILEGE_TYPE AS p FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ${GRANTEE} AND TABLE_SCHEMA = ?`, [
    database,
  ])) as [Row[]];
  const [tables] = (await db.raw(
    `SELECT TABLE_NAME AS t, PRIVILEGE_TYPE AS p FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ${GRANTEE} AND TABLE_SCHEMA = ?`,
    [database],
  )) as [Row[]];
  const [columns] = (await db.raw(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, PRIVILEGE_TYPE AS p FROM information_schema.COLUMN_PRIVILEGES WHERE GRANTEE = ${GRANTEE} AND TABLE_SCHEMA = ?`,
    [database],
  )) as [Row[]];
  const group = (rows: Row[], key: (r: Row) => string) => {
    const out = new Map<string, Set<string>>();
    for (const r of rows) out.set(key(r), (out.get(key(r)) ?? new Set()).add(r.p.toUpperCase()));
    return out;
  };
  return {
    global: new Set(global.map((r) => r.p.toUpperCase())),
    schema: new Set(schema.map((r) => r.p.toUpperCase())),
    tables: group(tables, (r) => r.t!),
    columns: group(columns, (r) => `${r.t!}.${r.c!}`),
  };
}
