/**
 * An expiry batch addresses up to 2000 rows by an IN list. MariaDB converts IN lists of 1000 or
 * more values into a semi-join, and for the coupon release that plan was a full scan of coupons
 * under FOR UPDATE. timebucket's sessions turn the conversion off (db/knex.ts): the plans of the
 * batch statements stay key lookups at any batch size.
 */
import type { Knex } from 'knex';
import { RELEASE_LOCK_SQL } from '../../../src/expire/sql/release-coupons';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let testDb: TestDatabase;
let db: Knex;

beforeAll(async () => {
  testDb = await createTestDatabase('in_lists');
  db = testDb.db;
  // Enough rows that a full scan is a real choice for the optimizer.
  for (let i = 0; i < 4; i += 1) {
    await db('coupons').insert(Array.from({ length: 2_500 }, (_, k) => ({ user_id: 1, status: k % 10 === 0 ? 'LOCKED' : 'ACTIVE', locked_order_id: k % 10 === 0 ? i * 2_500 + k + 1 : null, expire_time: db.raw('NOW(3)') })));
  }
  await db.raw('ANALYZE TABLE coupons');
});

afterAll(async () => {
  await testDb?.drop();
});

async function accessOf(sql: string, ids: string[]): Promise<Record<string, unknown>> {
  const [[row]] = (await db.raw(`EXPLAIN FORMAT=JSON ${sql.replace(/ FOR UPDATE$/, '')}`, [ids])) as [[{ EXPLAIN: string }]];
  const plan = JSON.parse(row.EXPLAIN) as { query_block: Record<string, unknown> };
  return plan.query_block;
}

test.each([10, 1_500, 2_000])('the coupon release with %i order ids reads idx_coupons_locked_order, never the whole table', async (n) => {
  const ids = Array.from({ length: n }, (_, i) => String(i + 1));
  const block = await accessOf(RELEASE_LOCK_SQL, ids);
  const text = JSON.stringify(block);
  expect(text).not.toMatch(/"access_type":"ALL"/);
  expect(text).toMatch(/"key":"idx_coupons_locked_order"/);
});

test('the session setting is what keeps it so: with the conversion on, the same statement scans the table', async () => {
  const ids = Array.from({ length: 1_500 }, (_, i) => String(i + 1));
  await db.transaction(async (trx) => {
    await trx.raw('SET SESSION in_predicate_conversion_threshold = 1000');
    try {
      const [[row]] = (await trx.raw(`EXPLAIN FORMAT=JSON ${RELEASE_LOCK_SQL.replace(/ FOR UPDATE$/, '')}`, [ids])) as [[{ EXPLAIN: string }]];
      expect(row.EXPLAIN).toMatch(/"access_type":\s*"ALL"/);
    } finally {
      await trx.raw('SET SESSION in_predicate_conversion_threshold = 0');
    }
  });
});
