import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { createDb } from '../db/knex';

export async function migrate(config: Config, logger: Logger, opts: { down: boolean }): Promise<void> {
  const db = createDb(config.db, { logger });
  try {
    if (opts.down) {
      const [, rolledBack] = (await db.migrate.rollback(undefined, true)) as [number, string[]];
      logger.info({ rolledBack }, 'migrations rolled back');
    } else {
      const [, applied] = (await db.migrate.latest()) as [number, string[]];
      logger.info({ applied }, applied.length > 0 ? 'migrations applied' : 'database already up to date');
    }
  } finally {
    await db.destroy();
  }
}
