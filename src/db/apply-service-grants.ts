/**
 * `timebucket migrate` with TB_DB_SERVICE_USER: the service account ends with what this entities
 * file needs (db/service-grants.ts) and with nothing timebucket granted it for an earlier one.
 *
 * The revoke rule: migrate revokes only what its own ledger (db/sql/service-grant-ledger.ts) says it
 * granted this account in this database, on a table or column the current file no longer
 * needs: a column a narrowed transition stopped assigning, every column of a table the file
 * stopped mapping. A grant someone else made on a table timebucket never managed is never
 * touched, and none of another database or account. The owner cannot read the account's
 * grants to tell them apart (information_schema and SHOW GRANTS show another account's
 * privileges only to a reader of the mysql schema), hence the ledger.
 * One exception, for grants made before the ledger existed: versions before it granted SELECT
 * on the whole of each mapped table. A mapped table the ledger has nothing of for the account
 * may still hold it, and it is revoked too (on a table mapped now: migrate manages it).
 *
 * Order, so the running service never lacks a privilege it still needs:
 *   1. record the grants in the ledger (before they exist: see the ledger's header)
 *   2. revoke the excess table-wide privileges: a table-wide REVOKE SELECT also takes every
 *      column's SELECT with it (on MariaDB and MySQL alike), so it must come before the column
 *      grants. Only the old whole-table SELECT is in that case; while the grants follow, a
 *      statement is refused (1142), which the service retries: a moment, once per table.
 *   3. GRANT what is needed
 *   4. revoke the excess column privileges, which touch no other column
 *   5. forget the revoked in the ledger
 * A REVOKE of a grant that is not there (an operator revoked it already; the account never had
 * the old whole-table SELECT) fails with 1147 on both servers and is skipped.
 *
 * What migrate did not grant it does not revoke: a privilege on the whole database or global
 * (SELECT ON shop.*, which reads the personal data too), or on a table or column it never managed,
 * is a DBA's. It reports them (`notRevoked`: each privilege wider than the file needs that the
 * account still holds), for the DBA to revoke. It can see them only as a reader of the mysql
 * schema (db/sql/read-own-privileges.ts): otherwise `notRevoked` is undefined and `timebucket
 * check`, run as the account, names them.
 */
import type { Knex } from 'knex';
import { MAIN_DATABASE, type EntityCatalogue } from '../core/entity-catalogue';
import { readEntitySchema } from './check-entity-schema';
import { forgetGrants, grantItems, itemKey, readGrantLedger, recordGrants, type GrantItem } from './sql/service-grant-ledger';
import { mappedTableGrants, neededGrants, type DbAccount } from './service-grants';
import { revokeStatement, serviceGrantStatements } from './sql/grant-statements';
import { readOwnPrivileges } from './sql/read-own-privileges';
import { widerPrivileges, type WiderPrivilege } from './privilege-check';

/** ER_NONEXISTING_TABLE_GRANT: "There is no such grant defined for user … on table …". */
const NO_SUCH_GRANT = 1147;

export type RevokePlan = Readonly<{ tableWide: readonly GrantItem[]; columns: readonly GrantItem[] }>;

/** What to revoke: the ledger's items (and, on a mapped table it has nothing of, the old whole-table SELECT) that are not wanted. */
export function revokePlan(recorded: readonly GrantItem[], wanted: readonly GrantItem[], mappedTables: readonly string[]): RevokePlan {
  const ledgered = new Set(recorded.map((i) => i.table));
  const legacy = mappedTables.filter((t) => !ledgered.has(t)).map((table) => ({ table, privilege: 'SELECT', column: '' }));
  const keep = new Set(wanted.map(itemKey));
  const excess = [...new Map([...recorded, ...legacy].map((i) => [itemKey(i), i])).values()].filter((i) => !keep.has(itemKey(i)));
  return { tableWide: excess.filter((i) => i.column === ''), columns: excess.filter((i) => i.column !== '') };
}

/** `notRevoked`: undefined when the owner cannot see the account's grants (see the header). */
export type AppliedGrants = Readonly<{ granted: readonly string[]; revoked: readonly string[]; notRevoked: readonly WiderPrivilege[] | undefined }>;

/**
 * Runs as the connected (owner) user, which needs GRANT OPTION on the database. `schemaName`:
 * the database's schema on its server; `database`: its name in the entities file (default main).
 * `revoked`: the REVOKEs that took something away.
 */
export async function grantServiceAccess(
  db: Knex,
  schemaName: string,
  account: DbAccount,
  catalogue: EntityCatalogue,
  database: string = MAIN_DATABASE,
  allowedGlobal: readonly string[] = [],
): Promise<AppliedGrants> {
  const schema = await readEntitySchema({ [database]: db }, catalogue, database);
  const needed = neededGrants(catalogue, schema, database);
  const wanted = grantItems(needed);
  const plan = revokePlan(
    await readGrantLedger(db, account),
    wanted,
    mappedTableGrants(catalogue, schema, database).map((g) => g.table),
  );
  const revoke = async (items: readonly GrantItem[]) => {
    const done: string[] = [];
    for (const i of items) {
      const sql = revokeStatement(schemaName, account, i);
      if (await runRevoke(db, sql)) done.push(sql);
    }
    return done;
  };
  await recordGrants(db, account, wanted);
  const revoked = await revoke(plan.tableWide);
  const granted = serviceGrantStatements(schemaName, account, needed);
  for (const sql of granted) await db.raw(sql);
  revoked.push(...(await revoke(plan.columns)));
  await forgetGrants(db, account, [...plan.tableWide, ...plan.columns]);
  const held = await readOwnPrivileges(db, schemaName, account);
  return { granted, revoked, notRevoked: held.listed === false ? undefined : widerPrivileges(needed, held, schemaName, allowedGlobal) };
}

/** false: there was nothing to revoke. */
async function runRevoke(db: Knex, sql: string): Promise<boolean> {
  try {
    await db.raw(sql);
    return true;
  } catch (err) {
    if ((err as { errno?: unknown }).errno === NO_SUCH_GRANT) return false;
    throw err;
  }
}
