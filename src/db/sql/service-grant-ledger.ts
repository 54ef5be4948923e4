/**
 * The ledger of what `migrate` granted an account in this database (table service_grants,
 * migration 20270201000000): the only record migrate revokes from (db/apply-service-grants.ts).
 *
 *   read    SELECT table_name, privilege, column_name FROM service_grants WHERE account = ?
 *   record  INSERT IGNORE INTO service_grants (…) VALUES (…), …     before the GRANTs run
 *   forget  DELETE FROM service_grants WHERE account = ? AND (table, privilege, column) IN (…)
 *                                                                  after the REVOKEs ran
 * Safe to re-run, and in that order never short of the truth: a grant is recorded before it is
 * made and forgotten after it is revoked, so a migrate killed between the two leaves at most a
 * row for a grant that is not there (its REVOKE then finds nothing, which is not an error).
 */
import type { Knex } from 'knex';
import type { DbAccount, TableGrant } from '../service-grants';

/** One privilege on one table, or on one of its columns (`column` '' for the whole table). */
export type GrantItem = Readonly<{ table: string; privilege: string; column: string }>;

export const itemKey = (i: GrantItem): string => `${i.table}\u0000${i.privilege}\u0000${i.column}`;

/** The grants as ledger items: table-wide privileges, then each column's. */
export function grantItems(grants: readonly TableGrant[]): GrantItem[] {
  return grants.flatMap((g) => [
    ...g.privileges.map((privilege) => ({ table: g.table, privilege, column: '' })),
    ...(g.selectColumns ?? []).map((column) => ({ table: g.table, privilege: 'SELECT', column })),
    ...(g.updateColumns ?? []).map((column) => ({ table: g.table, privilege: 'UPDATE', column })),
  ]);
}

export async function readGrantLedger(db: Knex, account: DbAccount): Promise<GrantItem[]> {
  const [rows] = (await db.raw(
    'SELECT table_name AS t, privilege AS p, column_name AS c FROM service_grants WHERE account_user = ? AND account_host = ? ORDER BY table_name, privilege, column_name',
    [account.user, account.host],
  )) as [Array<{ t: string; p: string; c: string }>];
  return rows.map((r) => ({ table: r.t, privilege: r.p, column: r.c }));
}

export async function recordGrants(db: Knex, account: DbAccount, items: readonly GrantItem[]): Promise<void> {
  if (items.length === 0) return;
  const values = items.flatMap((i) => [account.user, account.host, i.table, i.privilege, i.column]);
  await db.raw(
    `INSERT IGNORE INTO service_grants (account_user, account_host, table_name, privilege, column_name) VALUES ${items.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
    values,
  );
}

export async function forgetGrants(db: Knex, account: DbAccount, items: readonly GrantItem[]): Promise<void> {
  if (items.length === 0) return;
  const tuples = items.flatMap((i) => [i.table, i.privilege, i.column]);
  await db.raw(
    `DELETE FROM service_grants WHERE account_user = ? AND account_host = ? AND (table_name, privilege, column_name) IN (${items.map(() => '(?, ?, ?)').join(', ')})`,
    [account.user, account.host, ...tuples],
  );
}
