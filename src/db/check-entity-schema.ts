/**
 * At start (and in `timebucket check`): the entities file against the databases, every problem
 * named at once with its fix; a ConfigError (exit 78) when there is any. A service that would
 * fail on its first batch, or page the scanner through a filesort, must not start.
 */
import type { Knex } from 'knex';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { entitySchemaProblems } from '../core/entity-schema-check';
import { ConfigError } from '../core/errors';
import type { SchemaInfo, TableInfo } from '../core/column-info';
import { readTableSchema } from './read-table-schema';

/**
 * The mapped tables of every database (or of `only`), keyed by location (`<database>.<table>`).
 * `pools`: a pool per database name the catalogue uses (db/databases.ts).
 */
export async function readEntitySchema(pools: Readonly<Record<string, Knex>>, catalogue: EntityCatalogue, only?: string): Promise<SchemaInfo> {
  const byDatabase = new Map<string, string[]>();
  for (const l of catalogue.entities.flatMap((e) => e.locations)) {
    if (only === undefined || l.database === only) byDatabase.set(l.database, [...(byDatabase.get(l.database) ?? []), l.table]);
  }
  const schema = new Map<string, TableInfo>();
  for (const [database, tables] of byDatabase) {
    const pool = pools[database];
    if (pool === undefined) throw new RangeError(`no pool for database '${database}'`);
    for (const [table, info] of await readTableSchema(pool, tables)) schema.set(`${database}.${table}`, info);
  }
  return schema;
}

/** `schemaNames`: each database's schema name on its server (config.databases[name].database), for the messages. */
export async function checkEntitySchema(pools: Readonly<Record<string, Knex>>, catalogue: EntityCatalogue, schemaNames: Readonly<Record<string, string>>): Promise<SchemaInfo> {
  const schema = await readEntitySchema(pools, catalogue);
  const problems = entitySchemaProblems(catalogue, schema, schemaNames);
  if (problems.length > 0) throw new ConfigError(`the entities file ${catalogue.source} does not match its databases: ${problems.join('; ')}`, { problems });
  return schema;
}

/** Database name → its schema name on its server. */
export function schemaNamesOf(databases: Readonly<Record<string, { database: string }>>): Readonly<Record<string, string>> {
  return Object.fromEntries(Object.entries(databases).map(([name, d]) => [name, d.database]));
}
