/**
 * What the running service may do in its database, and nothing more. Migrations run as an owner
 * user; `timebucket migrate` with TB_DB_SERVICE_USER set then grants that user exactly this,
 * table by table and, on the mapped tables, column by column: it reads every table the entities
 * file maps and may change only the columns a transition or an effect changes (the status, the
 * assigned columns, and the columns the server updates itself on every update). It cannot DROP,
 * ALTER, or touch any other column (test/integration/db/service-grants.test.ts shows each refusal).
 *
 * The list follows the statements under src/expire/sql, src/publish, src/reconcile and
 * src/ops: a statement that needs more fails in that test first.
 */
import type { Knex } from 'knex';
import type { SchemaInfo } from '../core/column-info';
import { MAIN_DATABASE, type EntityCatalogue } from '../core/entity-catalogue';
import { TimebucketError } from '../core/errors';
import { quoteId } from './quote-id';
import { readEntitySchema } from './check-entity-schema';

export type TableGrant = Readonly<{ table: string; privileges: readonly string[]; updateColumns?: readonly string[] }>;

/** timebucket's own tables. */
export const OWN_TABLE_GRANTS: readonly TableGrant[] = [
  // The expirer and the scanner insert, the capture probe too (the connector reads the binlog,
  // not the table); retention deletes.
  { table: 'event_outbox', privileges: ['SELECT', 'INSERT', 'DELETE'] },
  // `timebucket schemas register` saves the ids it registered (an upsert); `run` reads them.
  { table: 'event_schema_ids', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { table: 'scanner_cursors', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { table: 'control_switches', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
];

/**
 * The mapped tables of `database` (every table of a set): SELECT, and UPDATE of the columns the
 * transitions and effects write. `schema`: keyed by location (db/check-entity-schema.ts).
 */
export function mappedTableGrants(catalogue: EntityCatalogue, schema: SchemaInfo, database: string = MAIN_DATABASE): TableGrant[] {
  const columns = new Map<string, Set<string>>(catalogue.entities.map((e) => [e.name, new Set([e.status.column])]));
  for (const t of catalogue.transitions) {
    for (const a of t.set) columns.get(t.entity)!.add(a.column);
    for (const fx of t.effects) for (const a of fx.set) columns.get(fx.entity)!.add(a.column);
  }
  return catalogue.entities.flatMap((e) =>
    e.locations
      .filter((l) => l.database === database)
      .map((l) => {
        const set = new Set(columns.get(e.name));
        for (const c of schema.get(l.key)?.columns.values() ?? []) if (c.autoUpdated === true) set.add(c.name);
        return { table: l.table, privileges: ['SELECT'], updateColumns: [...set] };
      }),
  );
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

/**
 * Runs them as the connected (owner) user, which needs GRANT OPTION on the database. `schemaName`:
 * the database's schema on its server; `database`: its name in the entities file (default main).
 */
export async function grantServiceAccess(db: Knex, schemaName: string, account: DbAccount, catalogue: EntityCatalogue, database: string = MAIN_DATABASE): Promise<string[]> {
  const schema = await readEntitySchema({ [database]: db }, catalogue, database);
  const statements = serviceGrantStatements(schemaName, account, [...mappedTableGrants(catalogue, schema, database), ...OWN_TABLE_GRANTS]);
  for (const sql of statements) await db.raw(sql);
  return statements;
}
