/**
 * Replica lag by the heartbeat row, on the stack's GTID replica of server 1 (stack/lib/replica.sh;
 * started here when the stack runs none, and stopped again afterwards): `migrate` creates
 * timebucket_heartbeat and grants the replica reader SELECT on it and nothing else; the writer's
 * beats reach the replica and the lag is measured; the replica's SQL thread stopped makes the lag
 * rise, started again makes it fall; the expirer role runs the heartbeat and exports the lag when
 * a replica is configured (main.ts). Its own database on server 1, which replicates like any other.
 *
 * @mysql
 * @lane isolated
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { migrate } from '../../../src/cli/migrate';
import { loadConfig } from '../../../src/config';
import { systemClock } from '../../../src/core/clock';
import { createDb, type Db } from '../../../src/db/knex';
import { replicaHeartbeat, type ReplicaHeartbeat } from '../../../src/db/replica-heartbeat';
import { readHeartbeat } from '../../../src/db/sql/read-heartbeat';
import { trackReplicaLag } from '../../../src/ops/metrics-replica';
import { defaultCatalogue } from '../../support/catalogue';
import { createTestPipeline } from '../../support/pipeline';
import { logger } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';

const stack = (...args: string[]): string =>
  execFileSync('bash', [join(__dirname, '../../../stack/stack.sh'), ...args], { encoding: 'utf8', timeout: 180_000, stdio: ['ignore', 'pipe', 'pipe'] });
const WRITER = 'replica-heartbeat-test';

let testDb: TestDatabase;
let startedReplica = false;
let config: ReturnType<typeof loadConfig>;
let onReplica: Db;
let onPrimary: Db;
let heartbeat: ReplicaHeartbeat | undefined;

beforeAll(async () => {
  startedReplica = !/^\S+\s+up /m.test(stack('replica', 'status'));
  stack('replica', 'up');
  // A run that failed half-way may have left it stopped.
  stack('replica', 'sql-thread', 'start');
  testDb = await createTestDatabase('replica-lag', { migrate: false });
  // No service account: its grants would outlive the database.
  const env = { ...process.env, TB_DB_NAME: testDb.name, TB_DB_SERVICE_USER: undefined };
  config = loadConfig({ ...env, TB_DB_REPLICA_PORT: process.env['TB_STACK_REPLICA_PORT'] ?? '13308' });
  await migrate(config, defaultCatalogue, logger, { down: false });
  const reader = config.replicas.byDatabase['main']!;
  onReplica = createDb(reader);
  onPrimary = createDb({ ...reader, host: config.db.host, port: config.db.port });
}, 180_000);

afterAll(async () => {
  await heartbeat?.stop();
  stack('replica', 'sql-thread', 'start');
  const reader = config?.replicas.byDatabase['main'];
  if (reader !== undefined)
    await testDb.db.raw(`REVOKE SELECT ON \`${testDb.name}\`.\`timebucket_heartbeat\` FROM ?@'%'`, [reader.user]).catch(() => undefined);
  await Promise.allSettled([onReplica?.destroy(), onPrimary?.destroy()]);
  await testDb?.drop();
  if (startedReplica) stack('replica', 'down');
}, 120_000);

test("the replica reader may read the heartbeat row and nothing else of the service's", async () => {
  await expect(onPrimary.raw('SELECT seq FROM timebucket_heartbeat')).resolves.toBeDefined();
  await expect(onPrimary.raw('SELECT id FROM event_outbox LIMIT 1')).rejects.toMatchObject({ errno: 1142 });
  await expect(onPrimary.raw("INSERT INTO timebucket_heartbeat (writer, seq, ts) VALUES ('x', 1, NOW(6))")).rejects.toMatchObject({ errno: 1142 });
});

test('the writer’s beats reach the replica; its lag is measured and exported; the SQL thread stopped makes it rise, started again makes it fall', async () => {
  heartbeat = replicaHeartbeat({
    primaries: { main: testDb.db },
    replicas: config.replicas.byDatabase,
    writer: WRITER,
    intervalMs: 100,
    clock: systemClock,
    logger,
  });
  await heartbeat.start();
  const registry = new Registry();
  trackReplicaLag(registry, heartbeat.lags);
  const hb = heartbeat;
  const lag = () => hb.lagMs('main');

  const first = await waitFor("the writer's beat on the replica", () => readHeartbeat(onReplica, WRITER));
  await waitFor('a later beat on the replica', async () => ((await readHeartbeat(onReplica, WRITER))! > first ? true : undefined));
  const measured = await waitFor('a lag measured', lag);
  expect(measured).toBeGreaterThanOrEqual(0);
  expect(await registry.getSingleMetricAsString('timebucket_replica_lag_seconds')).toMatch(/timebucket_replica_lag_seconds\{database="main"\} \d/);

  stack('replica', 'sql-thread', 'stop');
  let risen: number;
  try {
    const stoppedAt = (await readHeartbeat(onReplica, WRITER))!;
    risen = await waitFor('the lag past 1 s with the SQL thread stopped', () => ((lag() ?? 0) >= 1_000 ? lag() : undefined), { timeoutMs: 60_000 });
    // Still rising, and the row on the replica has not moved: the lag is the replica's, not the reader's.
    await waitFor('the lag rising further', () => ((lag() ?? 0) > risen ? true : undefined), { timeoutMs: 60_000 });
    expect(await readHeartbeat(onReplica, WRITER)).toBe(stoppedAt);
  } finally {
    stack('replica', 'sql-thread', 'start');
  }
  await waitFor('the lag back under 1 s with the SQL thread running', () => (lag() !== undefined && lag()! < 1_000 ? true : undefined), { timeoutMs: 60_000 });
  expect(lag()).toBeLessThan(risen);
}, 180_000);

test('the expirer role, with a replica configured, beats on the primary and exports its replica’s lag', async () => {
  const pipeline = await createTestPipeline({ env: { TB_DB_NAME: testDb.name, TB_DB_REPLICA_PORT: String(config.replicas.byDatabase['main']!.port) } });
  try {
    await pipeline.start(['expirer']);
    const sample = /timebucket_replica_lag_seconds\{database="main"\} \d/;
    await waitFor('the replica lag of main in the metrics', async () =>
      sample.test(await pipeline.metrics.registry.getSingleMetricAsString('timebucket_replica_lag_seconds')) ? true : undefined,
    );
    // Its own row beside the test's writer, on the replica too.
    const others = async () => {
      const [rows] = (await onReplica.raw('SELECT writer FROM timebucket_heartbeat WHERE writer <> ?', [WRITER])) as [Array<{ writer: string }>];
      return rows.length > 0 ? rows : undefined;
    };
    expect(await waitFor("the expirer's own row on the replica", others)).toHaveLength(1);
  } finally {
    await pipeline.stopAll();
  }
}, 180_000);
