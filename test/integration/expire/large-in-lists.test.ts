/**
 * An expiry batch addresses up to 2000 rows by an IN list. MariaDB converts IN lists of 1000 or
 * more values into a semi-join, and for the coupon release that plan was a full scan of coupons
 * under FOR UPDATE. timebucket's sessions turn the conversion off (db/knex.ts): the plans of the
 * batch statements stay key lookups at any batch size.
 *
 * The statements are the ones the expirer runs, as built from entities/default.json
 * (transitionStatements), bound as it binds them: ids, then the from-set.
 *
 * @mysql
 * @lane isolated
 */
import { join } from 'node:path';
import type { Knex } from 'knex';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { transitionStatements } from '../../../src/expire/transition-batch';
import { loadEntities } from '../../../src/ops/load-entities';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { explainJson } from '../../support/explain';
import { stackFlavour } from '../../support/stack-flavour';

const catalogue = loadEntities(join(__dirname, '../../../entities/default.json'));
const couponExpired = transitionStatements(catalogue, transitionOf(catalogue, 'coupon', 'expired'));
const orderCancelled = transitionStatements(catalogue, transitionOf(catalogue, 'order', 'cancelled'));
/** The coupon release: the locking read of the order cancellation's one effect. */
const RELEASE_LOCK_SQL = orderCancelled.effects[0]!.lock;

let testDb: TestDatabase;
let db: Knex;

beforeAll(async () => {
  testDb = await createTestDatabase('in_lists');
  db = testDb.db;
  // Enough rows that a full scan is a real choice for the optimizer.
  for (let i = 0; i < 4; i += 1) {
    await db('coupons').insert(
      Array.from({ length: 2_500 }, (_, k) => ({
        user_id: 1,
        status: k % 10 === 0 ? 'LOCKED' : 'ACTIVE',
        locked_order_id: k % 10 === 0 ? i * 2_500 + k + 1 : null,
        expire_time: db.raw('NOW(3)'),
      })),
    );
    await db('orders').insert(
      Array.from({ length: 2_500 }, (_, k) => ({ user_id: 1, status: k % 3 === 0 ? 'PAID' : 'UNPAID', expire_time: db.raw('NOW(3)') })),
    );
  }
  await db.raw('ANALYZE TABLE coupons, orders');
});

afterAll(async () => {
  await testDb?.drop();
});

async function planOf(sql: string, bindings: readonly unknown[], trx: Knex | Knex.Transaction = db): Promise<string> {
  return JSON.stringify((JSON.parse(await explainJson(trx, sql, bindings)) as { query_block: Record<string, unknown> }).query_block);
}

const idList = (n: number): string[] => Array.from({ length: n }, (_, i) => String(i + 1));

test.each([10, 1_500, 2_000])('the coupon release with %i order ids reads idx_coupons_locked_order, never the whole table', async (n) => {
  const text = await planOf(RELEASE_LOCK_SQL, [idList(n), ['LOCKED']]);
  expect(text).not.toMatch(/"access_type":"ALL"/);
  expect(text).toMatch(/"key":"idx_coupons_locked_order"/);
});

test.each([
  ['coupon expiry', couponExpired],
  ['order cancellation', orderCancelled],
] as const)('the %s locks and updates its 2000 rows by primary key', async (_name, statements) => {
  const from = statements === couponExpired ? ['ACTIVE'] : ['UNPAID'];
  const lock = await planOf(statements.lock, [idList(2_000), from]);
  expect(lock).not.toMatch(/"access_type":"ALL"/);
  expect(lock).toMatch(/"key":"PRIMARY"/);
  // The guarded UPDATE's bindings: the status and assignments, then ids, the from-set and db-now.
  const values = statements === couponExpired ? ['EXPIRED', new Date(), 1] : ['CANCELLED', new Date(), 'TIMEOUT', 1];
  const update = await planOf(statements.update, [...values, idList(2_000), from, new Date()]);
  expect(update).not.toMatch(/"access_type":"ALL"/);
  expect(update).toMatch(/"key":"PRIMARY"/);
});

// MariaDB's conversion alone: MySQL has no such setting, and keeps IN lists as range lookups.
(stackFlavour() === 'mariadb' ? test : test.skip)(
  'the session setting is what keeps it so: with the conversion on, the same statement scans the table',
  async () => {
    const ids = idList(1_500);
    await db.transaction(async (trx) => {
      await trx.raw('SET SESSION in_predicate_conversion_threshold = 1000');
      try {
        expect(await planOf(RELEASE_LOCK_SQL, [ids, ['LOCKED']], trx)).toMatch(/"access_type":\s*"ALL"/);
      } finally {
        await trx.raw('SET SESSION in_predicate_conversion_threshold = 0');
      }
    });
  },
);
