/**
 * At start (and in `timebucket check`): the entities file against the database, every problem
 * named at once with its fix; a ConfigError (exit 78) when there is any. A service that would
 * fail on its first batch, or page the scanner through a filesort, must not start.
 */
import type { Knex } from 'knex';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { entitySchemaProblems } from '../core/entity-schema-check';
import { ConfigError } from '../core/errors';
import type { SchemaInfo } from '../core/column-info';
import { readTableSchema } from './read-table-schema';

export async function checkEntitySchema(db: Knex, catalogue: EntityCatalogue, database: string): Promise<SchemaInfo> {
  const schema = await readTableSchema(db, catalogue.entities.map((e) => e.table));
  const problems = entitySchemaProblems(catalogue, schema, database);
  if (problems.length > 0) throw new ConfigError(`the entities file ${catalogue.source} does not match database ${database}: ${problems.join('; ')}`, { problems });
  return schema;
}
