/**
 * Both expiry paths on the same rows at volume, through the whole pipeline: unpaid orders holding
 * coupons are cancelled (releasing them) while the coupons' own earlier entries, and other
 * coupons of the same shards, expire in the same seconds; meanwhile the application keeps
 * checking out other coupons. No error escapes (a deadlock, if any, is retried, nothing is
 * parked), every row ends where its state machine says, with one event each, and no checkout
 * waits on the expirer.
 *
 * @lane captured-2
 */
import { createDb, Db } from '../../../src/db/knex';
import { config as baseConfig } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { waitFor } from '../../support/wait-for';
import { countInStatus, metricSum } from '../../support/counts';
import { withLockWait } from '../../support/stack-flavour';

let db: Db;
let pipeline: TestPipeline;
const marker = 7_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

beforeAll(async () => {
  db = createDb(baseConfig.db);
  pipeline = await createTestPipeline();
  await pipeline.start();
});

afterAll(async () => {
  await pipeline.stopAll();
  await db.destroy();
});

const due = (ms: number) => db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor(ms * 1000)]);

test('orders holding coupons cancelled while coupons of the same shards expire: every row transitions once, checkouts never wait', async () => {
  const pairs = 150;
  const window = (i: number, n: number) => 3_000 + (4_000 * i) / n;
  // Coupons first ACTIVE (so each has an entry for its expire time), then locked by an unpaid
  // order due in the same seconds: their entries become stale while the order's cancellation
  // releases them, and the release schedules them again (already overdue).
  const [firstHeld] = await db('coupons').insert(
    Array.from({ length: pairs }, (_, i) => ({ user_id: marker, status: 'ACTIVE', expire_time: due(window(i, pairs)) })),
  );
  const heldCoupons = Array.from({ length: pairs }, (_, i) => firstHeld! + i);
  const [firstOrder] = await db('orders').insert(
    heldCoupons.map((c, i) => ({ user_id: marker, status: 'UNPAID', coupon_id: c, expire_time: due(window(i, pairs)) })),
  );
  const orders = heldCoupons.map((_, i) => firstOrder! + i);
  for (let i = 0; i < pairs; i += 1) await db('coupons').where({ id: heldCoupons[i] }).update({ status: 'LOCKED', locked_order_id: orders[i] });
  const [firstFree] = await db('coupons').insert(
    Array.from({ length: 300 }, (_, i) => ({ user_id: marker, status: 'ACTIVE', expire_time: due(window(i, 300)) })),
  );
  const freeCoupons = Array.from({ length: 300 }, (_, i) => firstFree! + i);
  // Coupons the application checks out during the flow (not due for a day).
  const [firstShop] = await db('coupons').insert(Array.from({ length: 100 }, () => ({ user_id: marker, status: 'ACTIVE', expire_time: due(86_400_000) })));
  const [shopOrder] = await db('orders').insert({ user_id: marker, status: 'UNPAID', expire_time: due(86_400_000) });

  let checkouts = 0;
  const checkoutErrors: unknown[] = [];
  let shopping = true;
  const shop = (async () => {
    for (let i = 0; shopping && i < 100; i += 1) {
      try {
        // A checkout that had to wait 1 s for a lock fails: the expirer must never make it wait.
        await db.raw(withLockWait("UPDATE coupons SET status = 'LOCKED', locked_order_id = ? WHERE id = ? AND status = 'ACTIVE'", 1), [
          shopOrder!,
          firstShop! + i,
        ]);
        checkouts += 1;
      } catch (err) {
        checkoutErrors.push(err);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  const count = (table: 'coupons' | 'orders', ids: number[], status: string) => countInStatus(db, table, status, ids);
  try {
    await waitFor(
      'every order cancelled and every coupon expired',
      async () =>
        (await count('orders', orders, 'CANCELLED')) === pairs && (await count('coupons', [...heldCoupons, ...freeCoupons], 'EXPIRED')) === pairs + 300
          ? true
          : undefined,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  } finally {
    shopping = false;
    await shop;
  }
  expect(checkoutErrors).toEqual([]);
  expect(checkouts).toBeGreaterThan(0);
  // Each held coupon went LOCKED → ACTIVE (released by its order) → EXPIRED, never straight from LOCKED.
  const held = (await db('coupons').whereIn('id', heldCoupons).select('version', 'locked_order_id', 'expired_at', 'expire_time')) as Array<{
    version: number;
    locked_order_id: number | null;
    expired_at: Date;
    expire_time: Date;
  }>;
  expect(held.filter((c) => c.locked_order_id !== null || c.version !== 2 || c.expired_at < c.expire_time)).toEqual([]);
  const orderEvents = await outboxCount(db, pipeline.catalogue, { entity: 'order', ids: orders });
  const couponEvents = await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids: [...heldCoupons, ...freeCoupons] });
  expect(orderEvents.rows + couponEvents.rows).toBe(pairs + pairs + 300);
  const parked = await metricSum(pipeline.metrics.parked);
  expect(parked).toBe(0);
});
