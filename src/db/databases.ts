/**
 * A pool per database the entities file names (config.databases; `main` always, for timebucket's
 * own tables). Every stage that touches an entity's rows takes the pool of the row's location.
 */
import type { Config } from '../config';
import { databasesOf, unconfiguredDatabases, type EntityCatalogue } from '../core/entity-catalogue';
import { ConfigError } from '../core/errors';
import type { Logger } from '../ops/logger';
import { createDb, type Db } from './knex';

export type Databases = Readonly<{
  /** By database name; `main` is config.db. */
  pools: Readonly<Record<string, Db>>;
  main: Db;
  destroy: () => Promise<void>;
}>;

export function openDatabases(
  config: Pick<Config, 'databases'>,
  catalogue: EntityCatalogue,
  logger?: Logger,
  opts: { demoTables?: boolean; migrate?: boolean } = {},
): Databases {
  const problems = unconfiguredDatabases(catalogue, config.databases);
  if (problems.length > 0) throw new ConfigError(problems.join('; '), { problems });
  const pools: Record<string, Db> = {};
  for (const name of databasesOf(catalogue)) {
    const db = config.databases[name]!;
    // Demo tables only ever on the main database (the local stack's `make run`).
    pools[name] = createDb(db, {
      ...(logger && { logger: logger.child({ database: name }) }),
      demoTables: name === 'main' && opts.demoTables === true,
      // migrate's DDL on a large table runs for minutes: its own deadline.
      ...(opts.migrate === true && { statementTimeoutMs: db.migrateStatementTimeoutMs }),
    });
  }
  return {
    pools,
    main: pools['main']!,
    destroy: async () => {
      await Promise.all(Object.values(pools).map((p) => p.destroy()));
    },
  };
}
