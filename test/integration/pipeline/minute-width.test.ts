/**
 * The production bucket width (one minute): a minute bucket is released at its start and each
 * entry fires at its own expire_time from the in-memory queue, so rows due a few seconds from
 * now expire inside their own minute, not when the minute (or the next one) is over.
 *
 * @lane captured-2
 */
import { createDb, Db } from '../../../src/db/knex';
import { config as baseConfig, logger } from '../../support/stack';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { waitFor } from '../../support/wait-for';

let db: Db;
let pipeline: TestPipeline;
const marker = 4_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
/** On time: the CDC path plus one expiry transaction, with room for a loaded machine; 1/20 of a bucket. */
const MAX_DELAY_MS = 3_000;

beforeAll(async () => {
  db = createDb(baseConfig.db);
  pipeline = await createTestPipeline({ topologyFile: 'test-minute.json' });
  await pipeline.start();
});

afterAll(async () => {
  await pipeline.stopAll();
  await db.destroy();
});

test('rows due within seconds expire at their own time inside their minute bucket', async () => {
  const ids: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const [id] = await db('coupons').insert({ user_id: marker, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [(2_000 + i * 300) * 1000]) });
    ids.push(id!);
  }
  await waitFor(
    'every coupon expired',
    async () => {
      const [row] = await db('coupons').whereIn('id', ids).where({ status: 'EXPIRED' }).count({ n: '*' });
      return Number(row!.n) === ids.length ? true : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  );
  const rows = (await db('coupons').whereIn('id', ids).orderBy('id').select('id', 'expire_time', 'expired_at')) as Array<{ id: number; expire_time: Date; expired_at: Date }>;
  // Delay = expired_at − expire_time, both by the database clock. Every row on time: never
  // early (I2), and late by at most MAX_DELAY_MS, a small fraction of the bucket width. An
  // expirer that fired a minute bucket's entries at the bucket's end, or at any coarser grain
  // than their own expire_time, would be late by up to a minute.
  const delays = rows.map((r) => ({ id: r.id, delayMs: r.expired_at.getTime() - r.expire_time.getTime() }));
  logger.info(`minute-width delays (ms): ${delays.map((d) => d.delayMs).join(', ')}`);
  expect(delays.filter((d) => d.delayMs < 0 || d.delayMs > MAX_DELAY_MS)).toEqual([]);
});
