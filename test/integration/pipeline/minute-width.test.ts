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
import { bucketStartOf } from '../../../src/core/topology';

let db: Db;
let pipeline: TestPipeline;
const marker = 4_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
/** The coupons fall due one every SPACING_MS from 2 s after insertion: 11.4 s between the first and the last. */
const COUNT = 20;
const SPACING_MS = 600;

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
  for (let i = 0; i < COUNT; i += 1) {
    const [id] = await db('coupons').insert({
      user_id: marker,
      status: 'ACTIVE',
      expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [(2_000 + i * SPACING_MS) * 1000]),
    });
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
  const rows = (await db('coupons').whereIn('id', ids).orderBy('id').select('id', 'expire_time', 'expired_at')) as Array<{
    id: number;
    expire_time: Date;
    expired_at: Date;
  }>;
  // Delay = expired_at − expire_time, both by the database clock. Never early (I2). And each at
  // its own time, which is an order, not a speed: an expirer that fired a minute bucket's entries
  // when the bucket is over would transition every row at or after its bucket's end. Fired one by
  // one, some row goes before its bucket ends: whichever second the minute turns at, one of the
  // rows (spread over 11.4 s) is due at least 11.4 s before the end of its bucket, so only a stall
  // that long on the stream's path could hide it. How late each row is is speed: logged here,
  // measured by `make bench`.
  const delays = rows.map((r) => ({ id: r.id, delayMs: r.expired_at.getTime() - r.expire_time.getTime() }));
  logger.info(`minute-width delays (ms): ${delays.map((d) => d.delayMs).join(', ')}`);
  expect(delays.filter((d) => d.delayMs < 0)).toEqual([]);
  const minute = pipeline.topology.tiers[0]!;
  const bucketEndOf = (ms: number) => bucketStartOf(minute, ms) + minute.widthMs;
  expect(rows.filter((r) => r.expired_at.getTime() < bucketEndOf(r.expire_time.getTime())).length).toBeGreaterThan(0);
});
