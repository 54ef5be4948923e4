/**
 * The service as production runs it: `timebucket migrate` as the owner grants the service
 * account (TB_DB_SERVICE_USER), then `timebucket run` with every role, as that account, expires
 * a coupon end to end. Every log line of both processes, at debug level, is searched for the
 * service account's password (the stack gives it one found nowhere else): it never appears. And a wrong password fails `migrate` with a clear message that
 * does not repeat it.
 *
 * @mysql
 */
import { config, uniqueName } from '../../support/stack';
import { createDb, Db } from '../../../src/db/knex';
import { collectEvents } from '../../support/events';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { CliRun, freePort, killRunning, outputLines, spawnCli } from '../../support/cli';
import { waitFor, withTimeout } from '../../support/wait-for';

const serviceUser = process.env['TB_DB_SERVICE_USER'] ?? 'timebucket_app';
const servicePassword = process.env['TB_DB_SERVICE_PASSWORD'] ?? 'svc-pw-7Qx2vL9k';

let pipeline: TestPipeline;
let owner: Db;
const runs: CliRun[] = [];

beforeAll(async () => {
  pipeline = await createTestPipeline();
  owner = createDb(config.db);
});

afterAll(async () => {
  killRunning(runs);
  await owner?.destroy();
});

test('migrate as the owner grants the service account; run as it expires a coupon; no password in any log line', async () => {
  const migrate = spawnCli(['migrate'], { ...pipeline.env, TB_DB_SERVICE_USER: serviceUser, TB_LOG_LEVEL: 'debug' });
  runs.push(migrate);
  expect(await withTimeout('migrate to finish', migrate.exited, 60_000)).toEqual({ code: 0, signal: null });
  expect(migrate.stdout()).toMatch(/service user granted what the service needs/);

  const port = await freePort();
  const run = spawnCli(['run'], {
    ...pipeline.env,
    TB_DB_USER: serviceUser,
    TB_DB_PASSWORD: servicePassword,
    TB_LOG_LEVEL: 'debug',
    TB_HTTP_PORT: String(port),
    TB_INSTANCE_ID: uniqueName('least-privilege'),
  });
  runs.push(run);
  await waitFor('timebucket run to be ready', async () => ((await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok ? true : undefined), {
    timeoutMs: 90_000,
  });

  const [id] = await owner('coupons').insert({ user_id: 7, status: 'ACTIVE', expire_time: owner.raw('NOW(3) + INTERVAL 2 SECOND') });
  await waitFor(
    'the coupon to expire, by the service account',
    async () => ((await owner('coupons').where({ id }).first())?.status === 'EXPIRED' ? true : undefined),
    { timeoutMs: 60_000 },
  );
  const events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  try {
    await waitFor('its event to be published', async () => (events.events.some((e) => e.key === String(id)) ? true : undefined), { timeoutMs: 30_000 });
  } finally {
    await events.stop();
  }

  run.child.kill('SIGTERM');
  expect(await withTimeout('run to stop', run.exited, 30_000)).toEqual({ code: 0, signal: null });
  const lines = [...outputLines(migrate), ...outputLines(run)];
  expect(lines.length).toBeGreaterThan(5);
  expect(lines.filter((l) => l.includes(servicePassword))).toEqual([]);
});

test('a wrong password stops migrate with a clear message, without repeating the password', async () => {
  const wrong = 'wrong-pw-3kQ9zT';
  const migrate = spawnCli(['migrate'], { ...pipeline.env, TB_DB_PASSWORD: wrong, TB_LOG_LEVEL: 'debug' });
  runs.push(migrate);
  const exit = await withTimeout('migrate to fail', migrate.exited, 60_000);
  expect(exit.code).toBe(1);
  expect(migrate.stderr()).toMatch(/Access denied for user/);
  expect(outputLines(migrate).filter((l) => l.includes(wrong))).toEqual([]);
});
