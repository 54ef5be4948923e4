/**
 * The archive's mover, one page at a time, on the real server (src/archive/sql/archive-page.ts):
 * the old final rows move (exactly, ids to 64 bits, a generated column left to the archive), the
 * young ones and the rows not in a final state stay; a second pass moves nothing; a row the
 * application holds is skipped without waiting, and stays once it leaves its final state; a row
 * already in the archive stays in the hot table as a conflict.
 *
 * @mysql
 * @lane isolated
 */
import type { ArchivePage } from '../../../src/archive/sql/archive-page';
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { createArchiveTable } from '../../../src/db/sql/create-archive-table';
import { readDbNow } from '../../../src/db/sql/read-db-now';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { archivePass, firstTablePage } from '../../support/archive';
import { archivingWalletFile } from '../../support/entity-fixtures';

const HOUR = 3_600_000;
const catalogue = parseEntityFile(archivingWalletFile('wallet', 'wallet', { after: '1h' }), 'wallet.json');
const wallet = entityOf(catalogue, 'wallet');

let db: TestDatabase;
let page: ArchivePage;
let now: number;

const BIG = '18446744073709551610';

beforeAll(async () => {
  db = await createTestDatabase('archive-page', { migrate: false });
  await db.db.raw(`CREATE TABLE wallet (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    status VARCHAR(8) CHARACTER SET utf8mb4 NOT NULL,
    expire_at_ms BIGINT NOT NULL,
    updated_ms BIGINT NULL,
    note VARCHAR(40) NULL,
    status_chars INT AS (CHAR_LENGTH(status)) VIRTUAL,
    KEY idx_status_expire (status, expire_at_ms, id),
    KEY idx_status_updated (status, updated_ms, id)
  )`);
  await createArchiveTable(db.db, 'wallet', 'wallet_archive', 'id');
  page = await firstTablePage(db.db, wallet);
  now = await readDbNow(db.db);
});

afterAll(async () => {
  await db?.drop();
});

const row = (id: string, status: string, ageMs: number, note = `n${id}`) => ({ id, status, expire_at_ms: now - ageMs - 1, updated_ms: now - ageMs, note });
// Ids as exact strings, in numeric order (an alias `id` would sort as text).
const ids = async (table: string) => (await db.db(table).select(db.db.raw('CAST(id AS CHAR) AS sid')).orderBy('id')).map((r: { sid: string }) => r.sid);

/** Every candidate of every final state, page by page, then moved: what a pass does. */
const pass = (limit: number) => archivePass(db.db, wallet, page, limit);

test('the old final rows move, exactly, a page at a time; young and open rows stay; a second pass moves nothing', async () => {
  await db.db('wallet').insert([
    row('1', '已过期', 2 * HOUR),
    row('2', '已使用', 3 * HOUR),
    row('3', '已过期', 10 * 60_000), // young
    row('4', '待使用', 5 * HOUR), // not final
    row('5', '已过期', 2 * HOUR),
    row('6', '已使用', 2 * HOUR),
    row(BIG, '已过期', 4 * HOUR),
  ]);
  const before = await db
    .db('wallet')
    .whereIn('id', ['1', '2', '5', '6', BIG])
    .select(db.db.raw('CAST(id AS CHAR) AS sid'), 'status', 'updated_ms', 'note')
    .orderBy('id');

  expect(await pass(2)).toEqual({ moved: 5, conflicts: [], skipped: 0, pages: 3 });
  expect(await ids('wallet')).toEqual(['3', '4']);
  expect(await ids('wallet_archive')).toEqual(['1', '2', '5', '6', BIG]);
  const after = await db.db('wallet_archive').select(db.db.raw('CAST(id AS CHAR) AS sid'), 'status', 'updated_ms', 'note', 'status_chars').orderBy('id');
  expect(after.map((r: Record<string, unknown>) => ({ ...r, status_chars: undefined }))).toEqual(
    before.map((r: Record<string, unknown>) => ({ ...r, status_chars: undefined })),
  );
  // The archive's generated column computed its own value.
  expect(after.map((r: { status_chars: number }) => r.status_chars)).toEqual([3, 3, 3, 3, 3]);

  expect(await pass(2)).toEqual({ moved: 0, conflicts: [], skipped: 0, pages: 0 });
});

test('a row the application holds is skipped without waiting and stays once refunded; a row already in the archive stays as a conflict', async () => {
  await db.db('wallet').insert([row('10', '已使用', 2 * HOUR), row('11', '已使用', 2 * HOUR), row('12', '已过期', 2 * HOUR)]);
  await db.db('wallet_archive').insert({ id: '12', status: '已过期', expire_at_ms: 1, updated_ms: 1, note: 'older copy' });

  // The application's refund of coupon 10, holding its row while the mover runs.
  const refund = await db.db.transaction();
  try {
    await refund.raw('SELECT id FROM wallet WHERE id = 10 FOR UPDATE');
    const { ids: found } = await page.candidates(db.db, '已使用', await readDbNow(db.db), null, 100);
    expect(found).toEqual(['10', '11']);
    expect(await page.move(db.db, found)).toEqual({ moved: 1, conflicts: [], skipped: 1 });
    await refund.raw("UPDATE wallet SET status = '待使用', updated_ms = ? WHERE id = 10", [now]);
    await refund.commit();
  } catch (err) {
    await refund.rollback();
    throw err;
  }
  expect(await pass(100)).toEqual({ moved: 0, conflicts: ['12'], skipped: 0, pages: 1 });
  expect(await ids('wallet')).toEqual(['3', '4', '10', '12']);
  expect(await db.db('wallet').where({ id: 10 }).first('status')).toEqual({ status: '待使用' });
  expect(await db.db('wallet_archive').where({ id: 12 }).first('note')).toEqual({ note: 'older copy' });
});
