/**
 * Migrations apply, are idempotent and reverse cleanly, in a database of the test's own; and
 * the connection runs in UTC so DATETIME(3) round-trips to the exact instant.
 */
import { createDb, Db } from '../../../src/db/knex';
import { config } from '../../support/stack';

const database = `${config.db.database}_test_${process.pid}`;
let server: Db;
let db: Db;

beforeAll(async () => {
  server = createDb(config.db, { database: null });
  await server.raw(`CREATE DATABASE IF NOT EXISTS \`${database}\``);
  db = createDb(config.db, { database });
});

afterAll(async () => {
  await db.destroy();
  await server.raw(`DROP DATABASE IF EXISTS \`${database}\``);
  await server.destroy();
});

async function indexColumns(table: string, index: string): Promise<string[]> {
  const [rows] = (await db.raw(
    'SELECT column_name AS c FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? AND index_name = ? ORDER BY seq_in_index',
    [database, table, index],
  )) as [Array<{ c: string }>];
  return rows.map((r) => r.c);
}

test('apply, re-apply, roll back and apply again', async () => {
  await db.migrate.latest();
  const [, again] = (await db.migrate.latest()) as [number, string[]];
  expect(again).toEqual([]);
  await expect(indexColumns('coupons', 'idx_coupons_status_expire_id')).resolves.toEqual(['status', 'expire_time', 'id']);
  await expect(indexColumns('orders', 'idx_orders_status_expire_id')).resolves.toEqual(['status', 'expire_time', 'id']);

  await db.migrate.rollback(undefined, true);
  await expect(db.schema.hasTable('coupons')).resolves.toBe(false);
  await expect(db.schema.hasTable('orders')).resolves.toBe(false);

  await db.migrate.latest();
  await expect(db.schema.hasTable('coupons')).resolves.toBe(true);
});

test('the state machines are enforced by the schema', async () => {
  await db.migrate.latest();
  await expect(db('coupons').insert({ user_id: 1, status: 'BOGUS', expire_time: new Date() })).rejects.toThrow(/chk_coupons_status|CONSTRAINT/i);
  await expect(db('orders').insert({ user_id: 1, status: 'BOGUS', expire_time: new Date() })).rejects.toThrow(/chk_orders_status|CONSTRAINT/i);
});

test('sessions run in UTC and DATETIME(3) keeps milliseconds', async () => {
  await db.migrate.latest();
  const [[zone]] = (await db.raw('SELECT @@session.time_zone AS tz')) as [[{ tz: string }]];
  expect(zone.tz).toBe('+00:00');

  const instant = new Date(Date.UTC(2030, 11, 31, 23, 59, 59, 999));
  const [id] = await db('coupons').insert({ user_id: 1, status: 'ACTIVE', expire_time: instant });
  const row = (await db('coupons').where({ id }).first()) as { expire_time: Date };
  expect(row.expire_time.toISOString()).toBe('2030-12-31T23:59:59.999Z');
  const [[text]] = (await db.raw('SELECT CAST(expire_time AS CHAR) AS s FROM coupons WHERE id = ?', [id!])) as [[{ s: string }]];
  expect(text.s).toBe('2030-12-31 23:59:59.999');
});
