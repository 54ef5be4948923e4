/**
 * A database of one bench run's own, `<TB_DB_NAME>_test_bench_<label>_<random>` (the stack
 * grants `<db>_test%` to the application user), migrated, dropped by `drop()`. Only the stream
 * captures its database (connectors of its own, lib/bench-capture.ts; the stack's own connectors
 * are paused for the bench): a contender that does not need the stream is measured without the
 * binlog capture's load on top.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../src/config';
import { createDb, Db } from '../../src/db/knex';

export type BenchDatabase = Readonly<{ name: string; db: Db; drop: () => Promise<void> }>;

export async function createBenchDatabase(config: Config, label: string): Promise<BenchDatabase> {
  const name = `${config.db.database}_test_bench_${label}_${randomBytes(3).toString('hex')}`;
  const server = createDb(config.db, { database: null });
  await server.raw(`CREATE DATABASE \`${name}\``);
  const db = createDb(config.db, { database: name });
  let dropping: Promise<void> | undefined;
  // Every step runs even when an earlier one fails: a bench must not leave databases behind.
  const drop = () =>
    (dropping ??= (async () => {
      await db.destroy().catch(() => undefined);
      await server.raw(`DROP DATABASE IF EXISTS \`${name}\``).finally(() => server.destroy());
    })());
  try {
    await db.migrate.latest();
  } catch (err) {
    await drop().catch(() => undefined);
    throw err;
  }
  return { name, db, drop };
}
