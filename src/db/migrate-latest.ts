/**
 * knex's `migrate.latest()`, safe to run from several processes at once: replicas that each
 * migrate at start-up, a Job rolled out twice, the test lanes.
 *
 * knex creates its history table, its lock table and the lock table's one row on first use, and
 * nothing guards that: two processes migrating a new database at the same moment can both find
 * the lock table empty and both insert a row. knex's lock is an UPDATE that must change exactly
 * one row, so from then on nobody can take it, and every later migrate fails with "Migration
 * table is already locked", for good. Here the two tables are created first with IF NOT EXISTS
 * and the row with a fixed key (INSERT IGNORE), so racing processes all end with the one row; a
 * lock table that the race already doubled (no lock can have been taken on it since) is mended
 * (db/sql/prepare-migration-tables.ts).
 *
 * A process that finds the lock taken waits for the holder to finish (its migrations are then
 * done, and knex finds nothing left to run), up to `waitMs`, with the one retry helper; any other
 * failure ends `migrate` at once.
 */
import type { Db } from './knex';
import { MigrationLockedError } from '../core/errors';
import { RetryPolicies } from '../runtime/retry-policy';
import type { Logger } from '../ops/logger';
import { retry, withinDeadline } from '../runtime/retry';
import { systemClock } from '../core/clock';
import { prepareMigrationTables } from './sql/prepare-migration-tables';

export type MigrateOptions = Readonly<{ logger: Logger; waitMs?: number; sleep?: (ms: number) => Promise<void> }>;

/** The names of the migrations this call applied (none when another process had applied them). */
export async function migrateLatest(db: Db, opts: MigrateOptions): Promise<string[]> {
  const waitMs = opts.waitMs ?? 300_000;
  // Once: the race it closes is the tables' creation, over before any wait for the lock.
  await prepareMigrationTables(db);
  return retry(
    async () => {
      try {
        const [, applied] = (await db.migrate.latest()) as [number, string[]];
        return applied;
      } catch (err) {
        throw isMigrationLocked(err) ? new MigrationLockedError(waitMs, err) : err;
      }
    },
    {
      policy: RetryPolicies.migrate,
      what: 'migrate (the migrations lock is taken)',
      logger: opts.logger,
      // Only the lock is waited for: a refused login or an unreachable server is the operator's
      // to see at once, not after minutes of retries.
      beforeWait: (err) => {
        if (!(err instanceof MigrationLockedError)) throw err;
      },
      ...withinDeadline(waitMs, systemClock, opts.sleep),
    },
  );
}

/** knex's LockError: another process holds the migrations lock. */
function isMigrationLocked(err: unknown): boolean {
  return err instanceof Error && err.name === 'MigrationLocked';
}
