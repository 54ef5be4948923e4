/**
 * What the running service may do in its database, and nothing more. Migrations run as an owner
 * user; `timebucket migrate` with TB_DB_SERVICE_USER set then grants that user exactly this,
 * table by table and, on the mapped tables, column by column: it reads every table the entities
 * file maps and may change only the columns a transition or an effect changes (the status, the
 * assigned columns, and the columns the server updates itself on every update). It cannot DROP,
 * ALTER, or touch any other column (test/integration/db/service-grants.test.ts shows each refusal).
 *
 * The list follows the statements under src/expire/sql, src/publish/sql, src/reconcile and
 * src/ops: a statement that needs more fails in that test first.
 */
import type { Knex } from 'knex';
import type { SchemaInfo } from '../core/column-info';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { TimebucketError } from '../core/errors';
import { quoteId } from './quote-id';
import { readTableSchema } from './read-table-schema';

export type TableGrant = Readonly<{ table: string; privileges: readonly string[]; updateColumns?: readonly string[] }>;

/** timebucket's own tables. */
export const OWN_TABLE_GRANTS: readonly TableGrant[] = [
  // The expirer inserts, the relay locks, marks (published_at, claimed_by), sets aside and purges.
  { table: 'outbox', privileges: ['SELECT', 'INSERT', 'DELETE'], updateColumns: ['published_at', 'claimed_by'] },
  // Set aside with INSERT … SELECT … ON DUPLICATE KEY UPDATE, which needs UPDATE on the table.
  { table: 'outbox_poison', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
  { table: 'scanner_cursors', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { table: 'control_switches', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
];

/** The mapped tables: SELECT, and UPDATE of the columns the transitions and effects write. */
export function mappedTableGrants(catalogue: EntityCatalogue, schema: SchemaInfo): TableGrant[] {
  const columns = new Map<string, Set<string>>(catalogue.entities.map((e) => [e.table, new Set([e.status.column])]));
  const tableOf = (entity: string) => catalogue.entities.find((e) => e.name === entity)!.table;
  for (const t of catalogue.transitions) {
    for (const a of t.set) columns.get(tableOf(t.entity))!.add(a.column);
    for (const fx of t.effects) for (const a of fx.set) columns.get(tableOf(fx.entity))!.add(a.column);
  }
  return [...columns].map(([table, set]) => {
    for (const c of schema.get(table)?.columns.values() ?? []) if (c.autoUpdated === true) set.add(c.name);
    return { table, privileges: ['SELECT'], updateColumns: [...set] };
  });
}

/** A user as MySQL names it: 'name'@'host'. */
export type DbAccount = Readonly<{ user: string; host: string }>;

const ACCOUNT_PART = /^[A-Za-z0-9_.%-]+$/;

/** The GRANT statements, in order; identifiers are checked and quoted, never interpolated unchecked. */
export function serviceGrantStatements(database: string, account: DbAccount, grants: readonly TableGrant[]): string[] {
  if (!ACCOUNT_PART.test(account.user) || !ACCOUNT_PART.test(account.host)) {
    throw new TimebucketError('CONFIG_INVALID', `account ${account.user}@${account.host}: letters, digits and _.%- only`, { details: { problems: ['TB_DB_SERVICE_USER'] } });
  }
  const to = `'${account.user}'@'${account.host}'`;
  return grants.map((g) => {
    const privileges = [...g.privileges, ...(g.updateColumns ? [`UPDATE (${g.updateColumns.map(quoteId).join(', ')})`] : [])];
    return `GRANT ${privileges.join(', ')} ON ${quoteId(database)}.${quoteId(g.table)} TO ${to}`;
  });
}

/** Runs them as the connected (owner) user, which needs GRANT OPTION on the database. */
export async function grantServiceAccess(db: Knex, database: string, account: DbAccount, catalogue: EntityCatalogue): Promise<string[]> {
  const schema = await readTableSchema(db, catalogue.entities.map((e) => e.table));
  const statements = serviceGrantStatements(database, account, [...mappedTableGrants(catalogue, schema), ...OWN_TABLE_GRANTS]);
  for (const sql of statements) await db.raw(sql);
  return statements;
}
