import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { databasesOf, type EntityCatalogue } from '../core/entity-catalogue';
import { openDatabases } from '../db/databases';
import { grantServiceAccess } from '../db/apply-service-grants';
import { migrateLatest } from '../db/migrate-latest';

/**
 * Every database the entities file names gets timebucket's tables (an entity's transitions write
 * their events into the outbox of the entity's own database, in the same transaction); the demo
 * tables only ever on the main one, and only locally. Then, with TB_DB_SERVICE_USER, each
 * database's grants, and the revokes of what an earlier entities file needed (db/apply-service-grants.ts).
 */
export async function migrate(config: Config, catalogue: EntityCatalogue, logger: Logger, opts: { down: boolean }): Promise<void> {
  const databases = openDatabases(config, catalogue, logger, { demoTables: config.env === 'local', migrate: true });
  try {
    for (const name of databasesOf(catalogue)) {
      const db = databases.pools[name]!;
      const log = logger.child({ database: name });
      if (opts.down) {
        const [, rolledBack] = (await db.migrate.rollback(undefined, true)) as [number, string[]];
        log.info({ rolledBack }, 'migrations rolled back');
        continue;
      }
      const applied = await migrateLatest(db, { logger: log });
      log.info({ applied }, applied.length > 0 ? 'migrations applied' : 'database already up to date');
      const account = config.migrate.serviceAccount;
      if (account !== undefined) {
        const { granted, revoked } = await grantServiceAccess(db, config.databases[name]!.database, account, catalogue, name);
        log.info({ account: `${account.user}@${account.host}`, grants: granted, revoked }, 'service user granted what the service needs, and no more');
      }
    }
  } finally {
    await databases.destroy();
  }
}
