/**
 * At start (and in `timebucket check`): the entities file against the databases, every problem
 * named at once with its fix; a ConfigError (exit 78) when there is any. A service that would
 * fail on its first batch, or page the scanner through a filesort, must not start. Once a
 * database's tables match, its data is checked too (check-entity-data.ts): due values implausible
 * for their kind, status codes no row holds, a first pass that would transition most of a table.
 * That last one alone does not stop the process: it is returned, and the process holds that
 * transition at that table (db/first-pass-holds.ts) while every other entity and role runs.
 */
import type { Knex } from 'knex';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { entitySchemaProblems } from '../core/entity-schema-check';
import { ConfigError } from '../core/errors';
import type { SchemaInfo, TableInfo } from '../core/column-info';
import { MAIN_DATABASE } from '../core/entity-catalogue';
import { classifyFailure } from '../runtime/retry-policy';
import { readTableSchema } from './sql/read-table-schema';
import { entityDataFindings, type FirstPassHold } from './check-entity-data';
import { readScannedCursors } from './sql/read-scanned-cursors';
import { DEFAULT_FIRST_PASS, type FirstPassLimits } from '../core/first-pass-guard';

/**
 * The mapped tables of every database (or of `only`), and their archive tables, keyed by location (`<database>.<table>`).
 * `pools`: a pool per database name the catalogue uses (db/databases.ts).
 */
export async function readEntitySchema(pools: Readonly<Record<string, Knex>>, catalogue: EntityCatalogue, only?: string): Promise<SchemaInfo> {
  const byDatabase = new Map<string, string[]>();
  // The hot tables, and the archive tables of the entities that declare one.
  for (const l of catalogue.entities.flatMap((e) => [...e.locations, ...(e.archive?.tables.map((t) => t.archive) ?? [])])) {
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

/**
 * The data of `databases` (whose tables match the file) against the file, each through its own
 * pool; a ConfigError naming every problem but a refused first pass, which is returned to be held.
 * The scanner's cursors are read from the main database.
 */
export async function checkEntityData(
  pools: Readonly<Record<string, Knex>>,
  catalogue: EntityCatalogue,
  schemaNames: Readonly<Record<string, string>>,
  databases: readonly string[],
  firstPass: FirstPassLimits,
): Promise<FirstPassHold[]> {
  const main = pools[MAIN_DATABASE];
  const scannedCursors = main === undefined || firstPass.allowLarge ? new Set<string>() : await readScannedCursors(main);
  const problems: string[] = [];
  const held: FirstPassHold[] = [];
  for (const database of databases) {
    const found = await entityDataFindings(pools[database]!, catalogue, database, schemaNames, { firstPass, scannedCursors });
    problems.push(...found.problems);
    held.push(...found.firstPass);
  }
  if (problems.length > 0) throw new ConfigError(`the data of the tables ${catalogue.source} maps does not fit it: ${problems.join('; ')}`, { problems });
  return held;
}

/**
 * What start-up read: the tables of the databases that answered, the ones that did not, and the
 * transitions whose first pass the answering ones refused (`held`).
 */
export type StartSchema = Readonly<{
  schema: Map<string, TableInfo>;
  unchecked: readonly string[];
  errors: Readonly<Record<string, string>>;
  held: readonly FirstPassHold[];
}>;

/**
 * At start (`schemaNames`: each database's schema name on its server, for the messages;
 * `firstPass`: config.firstPass): every database's tables read and checked, except those of a database other than
 * the main one that does not answer (a retriable failure), which are left for later
 * (db/database-watch.ts) so the process serves the others. The main database holds
 * timebucket's own tables: without it nothing runs, and its failure is thrown.
 */
export async function checkAnsweringSchemas(
  pools: Readonly<Record<string, Knex>>,
  catalogue: EntityCatalogue,
  schemaNames: Readonly<Record<string, string>>,
  firstPass: FirstPassLimits = DEFAULT_FIRST_PASS,
): Promise<StartSchema> {
  const schema = new Map<string, TableInfo>();
  const unchecked: string[] = [];
  const errors: Record<string, string> = {};
  const read = await Promise.all(
    Object.keys(pools).map(async (database) => {
      try {
        return { database, tables: await readEntitySchema(pools, catalogue, database) };
      } catch (err) {
        if (database === MAIN_DATABASE || classifyFailure(err) !== 'retriable') throw err;
        return { database, err };
      }
    }),
  );
  for (const r of read) {
    if ('err' in r) {
      unchecked.push(r.database);
      errors[r.database] = r.err instanceof Error ? r.err.message : String(r.err);
    } else for (const [key, info] of r.tables) schema.set(key, info);
  }
  const answering = Object.keys(pools).filter((d) => !unchecked.includes(d));
  const problems =
    unchecked.length === 0
      ? entitySchemaProblems(catalogue, schema, schemaNames)
      : answering.flatMap((d) => entitySchemaProblems(catalogue, schema, schemaNames, d));
  if (problems.length > 0) throw new ConfigError(`the entities file ${catalogue.source} does not match its databases: ${problems.join('; ')}`, { problems });
  const held = await checkEntityData(pools, catalogue, schemaNames, answering, firstPass);
  return { schema, unchecked, errors, held };
}

/**
 * The tables of `database`, which did not answer at start, read and checked now, and added to
 * `schema`; a ConfigError as at start when they do not match (the tables of a set against the
 * others' too, once every database has been read). Returns its transitions whose first pass is refused.
 */
export async function checkDatabaseSchema(
  pools: Readonly<Record<string, Knex>>,
  catalogue: EntityCatalogue,
  schemaNames: Readonly<Record<string, string>>,
  schema: Map<string, TableInfo>,
  database: string,
  firstPass: FirstPassLimits = DEFAULT_FIRST_PASS,
): Promise<FirstPassHold[]> {
  const tables = await readEntitySchema(pools, catalogue, database);
  const merged = new Map([...schema, ...tables]);
  const complete = catalogue.entities.every((e) => e.locations.every((l) => merged.has(l.key)));
  const problems = complete ? entitySchemaProblems(catalogue, merged, schemaNames) : entitySchemaProblems(catalogue, merged, schemaNames, database);
  if (problems.length > 0)
    throw new ConfigError(`the entities file ${catalogue.source} does not match database '${database}': ${problems.join('; ')}`, { problems });
  const held = await checkEntityData(pools, catalogue, schemaNames, [database], firstPass);
  for (const [key, info] of tables) schema.set(key, info);
  return held;
}

/** Database name → its schema name on its server. */
export function schemaNamesOf(databases: Readonly<Record<string, { database: string }>>): Readonly<Record<string, string>> {
  return Object.fromEntries(Object.entries(databases).map(([name, d]) => [name, d.database]));
}
