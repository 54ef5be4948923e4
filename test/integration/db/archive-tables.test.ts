/**
 * The archive tables on the real server (the entities file's `archive`): `timebucket migrate`
 * creates each missing one from its hot table (every column as it is, the id its primary key
 * without AUTO_INCREMENT), leaves an existing one alone, and the schema check then passes; a
 * table the team made that cannot take the rows as they are is named with its fix.
 *
 * A table set of a seed-style wallet (Chinese states, epoch-millisecond due and since columns).
 *
 * @mysql
 * @lane isolated
 */
import { loadConfig } from '../../../src/config';
import { parseEntityFile } from '../../../src/core/entity-file';
import { ConfigError } from '../../../src/core/errors';
import { migrate } from '../../../src/cli/migrate';
import { checkAnsweringSchemas } from '../../../src/db/check-entity-schema';
import { readTableSchema } from '../../../src/db/sql/read-table-schema';
import { logger } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { archivingWalletFile } from '../../support/entity-fixtures';

const catalogue = parseEntityFile(archivingWalletFile('user_coupon', 'user_coupon_{0..1}'), 'archive.json');

let db: TestDatabase;

const hotTable = (name: string) => `CREATE TABLE ${name} (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id BIGINT UNSIGNED NOT NULL,
  status VARCHAR(8) CHARACTER SET utf8mb4 NOT NULL,
  expire_at_ms BIGINT NOT NULL,
  updated_ms BIGINT NULL,
  face_value DECIMAL(10,2) NOT NULL DEFAULT 0,
  KEY idx_status_expire (status, expire_at_ms, id),
  KEY idx_status_updated (status, updated_ms, id),
  KEY idx_user (user_id)
)`;

async function problems(): Promise<string[]> {
  try {
    await checkAnsweringSchemas({ main: db.db }, catalogue, { main: db.name });
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
}

beforeAll(async () => {
  db = await createTestDatabase('archive-tables', { migrate: false });
  for (const t of ['user_coupon_0', 'user_coupon_1']) await db.db.raw(hotTable(t));
});

afterAll(async () => {
  await db?.drop();
});

test('migrate creates each missing archive as its hot table, without AUTO_INCREMENT; the check passes; a second migrate changes nothing', async () => {
  // A team's own archive for the second table, as it should be: left alone.
  await db.db.raw('CREATE TABLE user_coupon_1_archive LIKE user_coupon_1');
  await db.db.raw('ALTER TABLE user_coupon_1_archive MODIFY id BIGINT UNSIGNED NOT NULL, ADD COLUMN archived_at DATETIME(3) NULL');
  expect(await problems()).toEqual([
    `user_coupon archive (${db.name}.user_coupon_0): archive table ${db.name}.user_coupon_0_archive does not exist; \`timebucket migrate\` creates it (CREATE TABLE ${db.name}.user_coupon_0_archive LIKE ${db.name}.user_coupon_0, without AUTO_INCREMENT)`,
  ]);

  // No service account: its grants would outlive the database.
  const config = loadConfig({ ...process.env, TB_DB_NAME: db.name, TB_DB_SERVICE_USER: undefined });
  await migrate(config, catalogue, logger, { down: false });
  expect(await problems()).toEqual([]);

  const tables = await readTableSchema(db.db, ['user_coupon_0', 'user_coupon_0_archive', 'user_coupon_1_archive']);
  const hot = tables.get('user_coupon_0')!;
  const archive = tables.get('user_coupon_0_archive')!;
  expect([...archive.columns.keys()]).toEqual([...hot.columns.keys()]);
  expect(hot.columns.get('id')!.autoIncrement).toBe(true);
  expect(archive.columns.get('id')).toMatchObject({ autoIncrement: false, nullable: false });
  expect(archive.indexes.map((i) => i.name).sort()).toEqual(['PRIMARY', 'idx_status_expire', 'idx_status_updated', 'idx_user']);
  // The team's table kept its own column.
  expect(tables.get('user_coupon_1_archive')!.columns.has('archived_at')).toBe(true);
  // An id of 0 is stored as 0, not replaced by a counter of the archive's own.
  await db.db('user_coupon_0_archive').insert({ id: 0, user_id: 1, status: '已过期', expire_at_ms: 1 });
  expect(await db.db('user_coupon_0_archive').pluck('id')).toEqual([0]);

  await migrate(config, catalogue, logger, { down: false });
  const [temporary] = (await db.db.raw(
    "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'tbtmp\\_%'",
  )) as [unknown[]];
  expect(temporary).toEqual([]);
  expect(await db.db('user_coupon_0_archive').pluck('id')).toEqual([0]);
});

test("a team's archive that cannot take the rows as they are, and a hot table without the mover's index", async () => {
  await db.db.raw('ALTER TABLE user_coupon_1_archive MODIFY face_value DECIMAL(8,2) NOT NULL, MODIFY id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT');
  await db.db.raw('ALTER TABLE user_coupon_0 DROP INDEX idx_status_updated');
  const names = (await problems()).map((p) => p.split(db.name).join('db'));
  expect(names).toEqual([
    "user_coupon archive (db.user_coupon_0): index idx_status_updated does not exist; the archive's mover pages through (status, since, id): CREATE INDEX idx_status_updated ON db.user_coupon_0 (status, updated_ms, id)",
    'user_coupon archive (db.user_coupon_1_archive): column face_value is decimal(8,2) NOT NULL but decimal(10,2) NOT NULL in db.user_coupon_1; the archive takes its rows as they are',
    "user_coupon archive (db.user_coupon_1_archive): id column id is AUTO_INCREMENT; the archive takes the hot table's ids: ALTER TABLE … MODIFY id without it",
  ]);
});
