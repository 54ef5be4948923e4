import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { createDb } from '../db/knex';
import { grantServiceAccess } from '../db/service-grants';
import { loadEntities } from '../ops/load-entities';

export async function migrate(config: Config, logger: Logger, opts: { down: boolean }): Promise<void> {
  // The grants follow the entities file: read it before touching the database.
  const catalogue = loadEntities(config.entitiesPath);
  const db = createDb(config.db, { logger, demoTables: config.env === 'local' });
  try {
    if (opts.down) {
      const [, rolledBack] = (await db.migrate.rollback(undefined, true)) as [number, string[]];
      logger.info({ rolledBack }, 'migrations rolled back');
    } else {
      const [, applied] = (await db.migrate.latest()) as [number, string[]];
      logger.info({ applied }, applied.length > 0 ? 'migrations applied' : 'database already up to date');
      const account = config.migrate.serviceAccount;
      if (account !== undefined) {
        const grants = await grantServiceAccess(db, config.db.database, account, catalogue);
        logger.info({ account: `${account.user}@${account.host}`, grants }, 'service user granted what the service needs, and no more');
      }
    }
  } finally {
    await db.destroy();
  }
}
