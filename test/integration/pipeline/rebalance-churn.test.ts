/**
 * Rebalances under load, as lag-based scaling causes them: three expirer processes join and
 * leave every few seconds (SIGTERM and kill -9 alike) while two thousand coupons fall due across
 * many buckets, with a memory cap small enough that partitions also pause at the cap. Every row
 * transitions, none before its time by the database clock, with one outbox row each.
 *
 * @lane captured-2
 */
import { createDb, Db } from '../../../src/db/knex';
import { config as baseConfig, logger } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { CliRun, isRunning, killRunning, spawnCli } from '../../support/cli';
import { waitFor } from '../../support/wait-for';
import { countInStatus } from '../../support/counts';

let db: Db;
let pipeline: TestPipeline;
const runs: CliRun[] = [];
const marker = 4_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

function startExpirer(): CliRun {
  const run = spawnCli(['run', '--roles', 'expirer'], {
    ...pipeline.env,
    TB_LOG_LEVEL: 'error',
    TB_HTTP_PORT: '0',
    TB_EXPIRER_BATCH_SIZE: '50',
    TB_EXPIRER_CONCURRENCY: '2',
    TB_MAX_IN_MEMORY_PER_PARTITION: '20',
    TB_SHUTDOWN_TIMEOUT_MS: '5000',
  });
  runs.push(run);
  return run;
}

const alive = () => runs.filter(isRunning);

const countExpired = (ids: number[]) => countInStatus(db, 'coupons', 'EXPIRED', ids);

beforeAll(async () => {
  db = createDb(baseConfig.db);
  pipeline = await createTestPipeline();
  await pipeline.start(['repartitioner', 'cascader', 'outbox-keeper']);
});

afterAll(async () => {
  killRunning(runs);
  await pipeline.stopAll();
  await db.destroy();
});

test('three expirers joining and leaving every few seconds: every coupon expires once, none early', async () => {
  for (let i = 0; i < 3; i += 1) startExpirer();
  const total = 2_000;
  // Due from 2 s to 16 s from now: minute-ring buckets, cascaded hour buckets and the due lane.
  const rows = Array.from({ length: total }, (_, i) => ({
    user_id: marker,
    status: 'ACTIVE',
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor((2_000 + (14_000 * i) / total) * 1000)]),
  }));
  const ids: number[] = [];
  for (let i = 0; i < total; i += 500) {
    const [firstId] = await db('coupons').insert(rows.slice(i, i + 500));
    for (let k = 0; k < Math.min(500, total - i); k += 1) ids.push(firstId! + k);
  }

  // Churn through the whole due window and beyond: every 3 s one expirer leaves (every other
  // time by kill -9) and a new one joins; then the group is left to settle, as after a scaling
  // storm. (Churning for ever would keep the group waiting on dead members' sessions.)
  let churns = 0;
  const churn = setInterval(() => {
    const victim = alive()[0];
    if (victim === undefined) return;
    victim.child.kill(churns % 2 === 0 ? 'SIGTERM' : 'SIGKILL');
    churns += 1;
    startExpirer();
  }, 3_000);
  try {
    await waitFor('24 s of churn', () => (churns >= 8 ? true : undefined), { timeoutMs: 40_000, intervalMs: 200 });
  } finally {
    clearInterval(churn);
  }
  await waitFor('every coupon expired', async () => ((await countExpired(ids)) === total ? true : undefined), { timeoutMs: 90_000, intervalMs: 500 });

  const rowsAfter = (await db('coupons').whereIn('id', ids).select('expire_time', 'expired_at', 'version')) as Array<{
    expire_time: Date;
    expired_at: Date;
    version: number;
  }>;
  const early = rowsAfter.filter((r) => r.expired_at.getTime() < r.expire_time.getTime());
  expect(early).toEqual([]);
  expect(rowsAfter.every((r) => r.version === 1)).toBe(true);
  expect(await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids })).toEqual({ rows: total, keys: total });
  // The processes stopped by SIGTERM exited 0.
  const terminated = runs.filter((r) => r.child.signalCode === null && r.child.exitCode !== null);
  for (const r of terminated) expect(r.child.exitCode).toBe(0);
  logger.info(`rebalance churn: ${churns} expirers replaced while ${total} coupons fell due; all expired once, none early`);
}, 180_000);
