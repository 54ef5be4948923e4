/**
 * knex's history and lock tables and the lock's single row, created so that processes racing to
 * migrate a new database all end with one row (db/migrate-latest.ts says why knex's own creation
 * is not enough):
 *
 *   CREATE TABLE IF NOT EXISTS knex_migrations (…)            (knex's own columns)
 *   CREATE TABLE IF NOT EXISTS knex_migrations_lock (`index` … PRIMARY KEY, is_locked INT)
 *   INSERT IGNORE INTO knex_migrations_lock (`index`, is_locked) SELECT 1, 0 FROM DUAL
 *     WHERE NOT EXISTS (SELECT 1 FROM knex_migrations_lock)
 *   SELECT MIN(`index`) FROM knex_migrations_lock; DELETE … WHERE `index` > that
 *
 * Inputs: the main database's pool. Output: none. Safe to re-run: every step is idempotent, and a
 * lock table the race already doubled (no lock can have been taken on it since) is mended. Plain
 * SQL that MySQL 8 and MariaDB both accept.
 */
import type { Knex } from 'knex';

/** knex's own names and columns (migrations: { tableName: 'knex_migrations' } in db/knex.ts). */
const HISTORY = 'knex_migrations';
const LOCK = 'knex_migrations_lock';

export async function prepareMigrationTables(db: Knex): Promise<void> {
  await db.raw(
    `CREATE TABLE IF NOT EXISTS ${HISTORY} (
       id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
       name VARCHAR(255), batch INT, migration_time TIMESTAMP NULL)`,
  );
  await db.raw(`CREATE TABLE IF NOT EXISTS ${LOCK} (\`index\` INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, is_locked INT)`);
  await db.raw(`INSERT IGNORE INTO ${LOCK} (\`index\`, is_locked) SELECT 1, 0 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM ${LOCK})`);
  // Rows beyond the first exist only after the race: no lock could be taken while they did. Read
  // first, then delete (MySQL refuses a DELETE whose subquery reads the table it deletes from).
  const first = (await db(LOCK).min({ first: 'index' }).first()) as { first: number | null } | undefined;
  if (first?.first != null) await db(LOCK).where('index', '>', first.first).delete();
}
