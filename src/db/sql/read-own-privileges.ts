/**
 * The privileges of an account, as information_schema lists them (on MySQL 8 and MariaDB alike):
 * globally, on the database (a grant on a pattern such as `shop%`.* counts where it matches),
 * per table and per column, and where the account may pass them on (GRANT OPTION).
 * Inputs: the database; the account, or none for the one this connection runs as. Output: the
 * held privileges. Safe to re-run: plain reads.
 *
 * Who can see what: an account always sees its own rows, without any privilege on the mysql
 * schema. Another account's rows are listed only to a reader of the mysql schema (SELECT on
 * mysql.*); to anyone else the account looks as if it held nothing, which `listed` tells apart:
 * every account has at least one global row (USAGE). Privileges that reach the account only
 * through a role that is not active are not listed here (MySQL 8 roles): `check` then reports
 * them missing.
 */
import type { Knex } from 'knex';

export type OwnPrivileges = Readonly<{
  global: ReadonlySet<string>;
  /** On the database, whichever grant gives it (its own name or a pattern). */
  schema: ReadonlySet<string>;
  /** table → privileges */
  tables: ReadonlyMap<string, ReadonlySet<string>>;
  /** `table.column` → privileges */
  columns: ReadonlyMap<string, ReadonlySet<string>>;
  /** The database-level grants one by one, as written (`shop` or a pattern `shop%`). */
  schemaGrants?: ReadonlyArray<Readonly<{ schema: string; privilege: string }>>;
  /** false: no row at all, so the reader may not see the account's grants (see the header). */
  listed?: boolean;
}>;

// CURRENT_USER() is user@host; information_schema writes the grantee as 'user'@'host'.
const CURRENT_GRANTEE = "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')";

/** GRANT OPTION is no row of its own: IS_GRANTABLE on the rows of the level it was granted at. */
const GRANT_OPTION = 'GRANT OPTION';

export async function readOwnPrivileges(db: Knex, database: string, account?: Readonly<{ user: string; host: string }>): Promise<OwnPrivileges> {
  type Row = { p: string; g: string; s?: string; t?: string; c?: string };
  const grantee = account === undefined ? CURRENT_GRANTEE : '?';
  const who = account === undefined ? [] : [`'${account.user}'@'${account.host}'`];
  const read = async (sql: string, bindings: string[] = []) => ((await db.raw(sql, [...who, ...bindings])) as [Row[]])[0];
  const global = await read(`SELECT PRIVILEGE_TYPE AS p, IS_GRANTABLE AS g FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ${grantee}`);
  const schema = await read(
    `SELECT TABLE_SCHEMA AS s, PRIVILEGE_TYPE AS p, IS_GRANTABLE AS g FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ${grantee} AND ? LIKE TABLE_SCHEMA`,
    [database],
  );
  const tables = await read(
    `SELECT TABLE_NAME AS t, PRIVILEGE_TYPE AS p, IS_GRANTABLE AS g FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ${grantee} AND TABLE_SCHEMA = ?`,
    [database],
  );
  const columns = await read(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, PRIVILEGE_TYPE AS p, IS_GRANTABLE AS g FROM information_schema.COLUMN_PRIVILEGES WHERE GRANTEE = ${grantee} AND TABLE_SCHEMA = ?`,
    [database],
  );
  // Each row's privilege, and GRANT OPTION once where a row of that level says it is grantable.
  const privilegesOf = (rows: Row[], withGrantOption: boolean) => {
    const out = rows.map((r) => r.p.toUpperCase());
    return withGrantOption && rows.some((r) => r.g === 'YES') ? [...out, GRANT_OPTION] : out;
  };
  const group = (rows: Row[], key: (r: Row) => string, withGrantOption: boolean) => {
    const byKey = new Map<string, Row[]>();
    for (const r of rows) byKey.set(key(r), [...(byKey.get(key(r)) ?? []), r]);
    return new Map([...byKey].map(([k, rs]) => [k, new Set(privilegesOf(rs, withGrantOption))]));
  };
  const schemaGrants = [...group(schema, (r) => r.s!, true)].flatMap(([s, ps]) => [...ps].map((privilege) => ({ schema: s, privilege })));
  return {
    global: new Set(privilegesOf(global, true)),
    schema: new Set(schemaGrants.map((g) => g.privilege)),
    tables: group(tables, (r) => r.t!, true),
    // Column rows carry their table's grant option: it is named on the table.
    columns: group(columns, (r) => `${r.t!}.${r.c!}`, false),
    schemaGrants,
    listed: global.length > 0,
  };
}

/** The account this connection runs as, 'user'@'host' as GRANT and REVOKE write it. */
export async function currentAccount(db: Knex): Promise<string> {
  const [[row]] = (await db.raw(`SELECT ${CURRENT_GRANTEE} AS a`)) as [[{ a: string }]];
  return row.a;
}
