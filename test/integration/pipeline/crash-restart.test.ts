/**
 * `kill -9` the expirer mid-run and start it again: nothing is lost (the new process re-reads
 * from the last committed offset) and nothing is doubled (one outbox row per transition).
 * The expirer runs as a real `timebucket run --roles expirer` process from dist/.
 *
 * @lane captured-2
 */
import type { ChildProcess } from 'node:child_process';
import { createDb, Db } from '../../../src/db/knex';
import { config as baseConfig, logger } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { waitFor } from '../../support/wait-for';
import { spawnCli } from '../../support/cli';
import { countInStatus } from '../../support/counts';

let db: Db;
let pipeline: TestPipeline;
const children: ChildProcess[] = [];
const marker = 3_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

function startExpirer(): ChildProcess {
  // Its logs are kept in memory (spawnCli), not printed: make test stays readable.
  const { child } = spawnCli(['run', '--roles', 'expirer'], {
    ...pipeline.env,
    TB_LOG_LEVEL: 'warn',
    TB_HTTP_PORT: '0',
    TB_EXPIRER_BATCH_SIZE: '50',
    TB_EXPIRER_CONCURRENCY: '2',
  });
  children.push(child);
  return child;
}

const countExpired = (ids: number[]) => countInStatus(db, 'coupons', 'EXPIRED', ids);

beforeAll(async () => {
  db = createDb(baseConfig.db);
  pipeline = await createTestPipeline();
  await pipeline.start(['repartitioner', 'cascader', 'outbox-keeper']);
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await pipeline.stopAll();
  await db.destroy();
});

test('kill -9 mid-run, restart: every coupon expires exactly once', async () => {
  const first = startExpirer();
  const total = 1_500;
  const rows = Array.from({ length: total }, (_, i) => ({
    user_id: marker,
    status: 'ACTIVE',
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor((2_000 + (10_000 * i) / total) * 1000)]),
  }));
  const ids: number[] = [];
  for (let i = 0; i < total; i += 250) {
    const [firstId] = await db('coupons').insert(rows.slice(i, i + 250));
    for (let k = 0; k < Math.min(250, total - i); k += 1) ids.push(firstId! + k);
  }

  await waitFor('the first expirer to make progress', async () => ((await countExpired(ids)) >= 100 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  first.kill('SIGKILL');
  await waitFor('the first expirer to die', () => (first.signalCode === 'SIGKILL' ? true : undefined));
  const atKill = await countExpired(ids);
  expect(atKill).toBeLessThan(total);

  startExpirer();
  await waitFor('every coupon expired after the restart', async () => ((await countExpired(ids)) === total ? true : undefined), {
    timeoutMs: 90_000,
    intervalMs: 250,
  });

  expect((await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids })).rows).toBe(total);
  const rowsAfter = (await db('coupons').whereIn('id', ids).select('expire_time', 'expired_at', 'version')) as Array<{
    expire_time: Date;
    expired_at: Date;
    version: number;
  }>;
  for (const r of rowsAfter) {
    expect(r.expired_at.getTime()).toBeGreaterThanOrEqual(r.expire_time.getTime());
    expect(r.version).toBe(1);
  }
  logger.info(`crash-restart: ${atKill} of ${total} expired when the expirer was killed; all ${total} after restart, one outbox row each`);
});
