/**
 * A database of one test file's own, so its counts are exact: no other file, run or connector
 * writes to it. Named `<db>_test_<label>_<pid>_<random>` (the stack grants `timebucket_test%`
 * to the application user), migrated unless asked not to, dropped by `drop()`.
 *
 * Only for tests that do not need Debezium: it captures the `timebucket` database alone.
 * `server: 2`: on the stack's second MariaDB server (stack/env.sh TB_STACK_DB2_PORT).
 */
import { randomBytes } from 'node:crypto';
import { createDb, Db } from '../../src/db/knex';
import { migrateLatest } from '../../src/db/migrate-latest';
import { createLogger } from '../../src/ops/logger';
import { config } from './stack';

export type TestDatabase = Readonly<{
  name: string;
  /** A pool on the test database. */
  db: Db;
  /** Idempotent: closes the pool, drops the database and closes the server connection, each even if another fails. */
  drop: () => Promise<void>;
}>;

export async function createTestDatabase(label: string, opts: { migrate?: boolean; server?: 1 | 2 } = {}): Promise<TestDatabase> {
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 20);
  // The stack's database name, also in the captured-2 lane (test/support/run-lanes.js), whose
  // TB_DB_NAME is itself a test database: a name past 64 characters is refused.
  const base = config.db.database.split('_test_')[0]!;
  const name = `${base}_test_${slug}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const target = opts.server === 2 ? secondServer() : config.db;
  const server = createDb(target, { database: null });
  await server.raw(`CREATE DATABASE \`${name}\``);
  const db = createDb(target, { database: name });
  let dropping: Promise<void> | undefined;
  const drop = (): Promise<void> =>
    (dropping ??= (async () => {
      const results = await Promise.allSettled([db.destroy()]);
      results.push(...(await Promise.allSettled([server.raw(`DROP DATABASE IF EXISTS \`${name}\``)])));
      results.push(...(await Promise.allSettled([server.destroy()])));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    })());
  try {
    if (opts.migrate !== false) await migrateLatest(db, { logger: createLogger('silent') });
  } catch (err) {
    await drop().catch(() => undefined);
    throw err;
  }
  return { name, db, drop };
}

/** The stack's second MariaDB server: the first one's accounts, its own port. */
export function secondServer(): typeof config.db {
  return { ...config.db, port: Number(process.env['TB_STACK_DB2_PORT'] ?? 13307) };
}
