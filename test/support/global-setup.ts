/**
 * Integration tests run against the real local stack (`make stack-up`). Fail fast, with the
 * command to run, when it is not there; then bring the application schema up to date, since
 * Debezium captures the real `coupons` and `orders` tables.
 */
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';

export default async function globalSetup(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createDb(config.db);
  try {
    await db.raw('SELECT 1');
  } catch (err) {
    throw new Error(
      `integration tests need the local stack (MariaDB at ${config.db.host}:${config.db.port}): run \`make stack-up\` first (${String(err)})`,
    );
  }
  try {
    await db.migrate.latest();
  } finally {
    await db.destroy();
  }
}
