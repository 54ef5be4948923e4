/**
 * What the running service may do in its database, and nothing more. Migrations run as an owner
 * user; `timebucket migrate` with TB_DB_SERVICE_USER set then grants that user exactly this,
 * table by table and, on the business tables, column by column: it reads coupons and orders and
 * may change only the columns a transition changes. It cannot DROP, ALTER, or touch any other
 * column (test/integration/db/service-grants.test.ts shows each refusal).
 *
 * The list follows the statements under src/expire/sql, src/publish/sql, src/reconcile and
 * src/ops: a statement that needs more fails in that test first.
 */
import type { Knex } from 'knex';

type TableGrant = Readonly<{ table: string; privileges: readonly string[]; updateColumns?: readonly string[] }>;

export const SERVICE_GRANTS: readonly TableGrant[] = [
  // A coupon expires (status, expired_at, version) or is released by its cancelled order
  // (status, locked_order_id, version); updated_at follows every update (ON UPDATE).
  { table: 'coupons', privileges: ['SELECT'], updateColumns: ['status', 'expired_at', 'locked_order_id', 'version', 'updated_at'] },
  { table: 'orders', privileges: ['SELECT'], updateColumns: ['status', 'cancel_time', 'cancel_reason', 'version', 'updated_at'] },
  // The expirer inserts, the relay locks, marks (published_at, claimed_by), sets aside and purges.
  { table: 'outbox', privileges: ['SELECT', 'INSERT', 'DELETE'], updateColumns: ['published_at', 'claimed_by'] },
  // Set aside with INSERT … SELECT … ON DUPLICATE KEY UPDATE, which needs UPDATE on the table.
  { table: 'outbox_poison', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
  { table: 'scanner_cursors', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { table: 'control_switches', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
];

/** A user as MySQL names it: 'name'@'host'. */
export type DbAccount = Readonly<{ user: string; host: string }>;

const IDENT = /^[A-Za-z0-9_]+$/;
const ACCOUNT_PART = /^[A-Za-z0-9_.%-]+$/;

/** The GRANT statements, in order; identifiers are checked, never interpolated unchecked. */
export function serviceGrantStatements(database: string, account: DbAccount): string[] {
  if (!IDENT.test(database)) throw new Error(`database name ${database}: letters, digits and _ only`);
  if (!ACCOUNT_PART.test(account.user) || !ACCOUNT_PART.test(account.host)) throw new Error(`account ${account.user}@${account.host}: letters, digits and _.%- only`);
  const to = `'${account.user}'@'${account.host}'`;
  return SERVICE_GRANTS.map((g) => {
    const privileges = [...g.privileges, ...(g.updateColumns ? [`UPDATE (${g.updateColumns.map((c) => `\`${c}\``).join(', ')})`] : [])];
    return `GRANT ${privileges.join(', ')} ON \`${database}\`.\`${g.table}\` TO ${to}`;
  });
}

/** Runs them as the connected (owner) user, which needs GRANT OPTION on the database. */
export async function grantServiceAccess(db: Knex, database: string, account: DbAccount): Promise<string[]> {
  const statements = serviceGrantStatements(database, account);
  for (const sql of statements) await db.raw(sql);
  return statements;
}
