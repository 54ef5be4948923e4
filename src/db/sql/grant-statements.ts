/**
 * The service account's GRANT and REVOKE statements, built from checked parts:
 *
 *   GRANT SELECT, UPDATE (`a`, `b`), SELECT (`c`) ON `db`.`table` TO 'user'@'host'
 *   REVOKE SELECT (`c`) ON `db`.`table` FROM 'user'@'host'
 *
 * Inputs: the database's schema name, the account, the grants (db/service-grants.ts says which
 * the service needs) or one item to revoke (db/sql/service-grant-ledger.ts). Output: the
 * statements, run by db/apply-service-grants.ts as the owner. Identifiers are checked and
 * quoted, never interpolated unchecked. Safe to re-run: a GRANT held already changes nothing; a
 * REVOKE of a grant that is not there fails with 1147, which the runner takes as done.
 */
import { TimebucketError } from '../../core/errors';
import { quoteId } from '../quote-id';
import type { DbAccount, TableGrant } from '../service-grants';
import type { GrantItem } from './service-grant-ledger';

const ACCOUNT_PART = /^[A-Za-z0-9_.%-]+$/;

/** `'user'@'host'`, its parts checked: letters, digits and _.%- only, so it is never interpolated unchecked. */
export function accountSql(account: DbAccount): string {
  if (!ACCOUNT_PART.test(account.user) || !ACCOUNT_PART.test(account.host)) {
    throw new TimebucketError('CONFIG_INVALID', `account ${account.user}@${account.host}: letters, digits and _.%- only`, {
      details: { problems: ['TB_DB_SERVICE_USER'] },
    });
  }
  return `'${account.user}'@'${account.host}'`;
}

/** `SELECT, UPDATE (a, b)`: a grant's privilege list, as GRANT and REVOKE write it. */
export function privilegeList(g: Omit<TableGrant, 'table'>): string {
  const columns = (p: string, cs: readonly string[] | undefined) => (cs === undefined || cs.length === 0 ? [] : [`${p} (${cs.map(quoteId).join(', ')})`]);
  return [...g.privileges, ...columns('SELECT', g.selectColumns), ...columns('UPDATE', g.updateColumns)].join(', ');
}

/** The GRANT statements, in order; identifiers are checked and quoted, never interpolated unchecked. */
export function serviceGrantStatements(database: string, account: DbAccount, grants: readonly TableGrant[]): string[] {
  const to = accountSql(account);
  return grants.map((g) => `GRANT ${privilegeList(g)} ON ${quoteId(database)}.${quoteId(g.table)} TO ${to}`);
}

export function revokeStatement(database: string, account: DbAccount, i: GrantItem): string {
  const privilege = i.column === '' ? i.privilege : `${i.privilege} (${quoteId(i.column)})`;
  return `REVOKE ${privilege} ON ${quoteId(database)}.${quoteId(i.table)} FROM ${accountSql(account)}`;
}
