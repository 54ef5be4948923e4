/**
 * What an orchestrator sees of a `timebucket run` process: /healthz tells the truth about its
 * consumers, a member that can no longer consume ends the process non-zero, SIGTERM ends it
 * cleanly (group left, exit 0) within the deadline, bad configuration or topology drift
 * exit with their own codes, and a main database that does not answer at start is waited for
 * (no exit, so no crash loop), /readyz saying why.
 */
import { writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin } from 'kafkajs';
import { createKafka } from '../../../src/kafka/client';
import { config, logger, uniqueName } from '../../support/stack';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { CliRun, freePort, httpStatus, killRunning, spawnCli } from '../../support/cli';
import { waitFor, withTimeout } from '../../support/wait-for';
import { createTestDatabase } from '../../support/test-database';

let admin: Admin;
let pipeline: TestPipeline;
const runs: CliRun[] = [];

beforeAll(async () => {
  admin = createKafka(config.kafka, logger, '-test-health').admin();
  await admin.connect();
});

beforeEach(async () => {
  pipeline = await createTestPipeline();
});

afterEach(async () => {
  killRunning(runs.splice(0));
});

afterAll(async () => {
  await admin.disconnect();
});

async function startExpirer(env: Record<string, string> = {}): Promise<{ run: CliRun; port: number }> {
  const port = await freePort();
  const run = spawnCli(['run', '--roles', 'expirer'], { ...pipeline.env, TB_LOG_LEVEL: 'error', TB_HTTP_PORT: String(port), ...env });
  runs.push(run);
  return { run, port };
}

test('a consumer that can no longer consume turns /healthz 503 with the reason, then the process exits 1', async () => {
  const { run, port } = await startExpirer({ TB_CONSUMER_STALL_MS: '3000' });
  await waitFor('the expirer to be ready', async () => ((await httpStatus(port, '/readyz'))?.code === 200 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  expect(await httpStatus(port, '/healthz')).toEqual({ code: 200, body: 'ok\n' });

  // A subscribed topic deleted under it: kafkajs restarts the consumer over and over, and it
  // never fetches again, while the process itself stays up.
  await admin.deleteTopics({ topics: [`${pipeline.topology.prefix}.minute.03`] });
  const unhealthy = await waitFor(
    '/healthz to fail',
    async () => {
      const s = await httpStatus(port, '/healthz');
      return s?.code === 503 ? s : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  expect(unhealthy.body).toMatch(new RegExp(`^unhealthy\\nconsumer of group ${pipeline.env['TB_GROUP_PREFIX']}\\.expirer made no progress for \\d+ ms`));
  expect((await httpStatus(port, '/readyz'))?.code).toBe(503);
  expect(await withTimeout('the process to exit', run.exited, 30_000)).toEqual({ code: 1, signal: null });
});

test('SIGTERM: the member leaves its group and the process exits 0 within the deadline', async () => {
  const { run, port } = await startExpirer({ TB_SHUTDOWN_TIMEOUT_MS: '10000' });
  await waitFor('the expirer to be ready', async () => ((await httpStatus(port, '/readyz'))?.code === 200 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  const group = `${pipeline.env['TB_GROUP_PREFIX']}.expirer`;
  expect((await admin.describeGroups([group])).groups[0]!.members).toHaveLength(1);

  const sentAt = Date.now();
  run.child.kill('SIGTERM');
  expect(await withTimeout('the process to exit', run.exited, 15_000)).toEqual({ code: 0, signal: null });
  // The bound is the behaviour: the process must be gone by its shutdown deadline (10 s), counted
  // from the signal; 2 s more for the exit itself. A clean leave takes about a second.
  expect(Date.now() - sentAt).toBeLessThan(10_000 + 2_000);
  // Left, not timed out: the group is empty at once, not after the 10 s session timeout.
  const { groups } = await admin.describeGroups([group]);
  expect(groups[0]!.members).toHaveLength(0);
});

test('bad configuration exits 78 naming every problem; topology drift exits 3', async () => {
  const bad = spawnCli(['run'], { TB_KAFKA_BROKERS: 'no-port', TB_LOG_LEVEL: 'loud' });
  runs.push(bad);
  expect(await withTimeout('the process to exit', bad.exited, 20_000)).toEqual({ code: 78, signal: null });
  expect(bad.stderr()).toMatch(/TB_KAFKA_BROKERS/);
  expect(bad.stderr()).toMatch(/TB_LOG_LEVEL/);

  // The pipeline's topics exist; a topology declaring more due-lane partitions has drifted.
  const drifted = JSON.parse(JSON.stringify({ ...pipeline.topology, due: { partitions: pipeline.topology.due.partitions + 1 } })) as object;
  const path = join(tmpdir(), `${uniqueName('drift')}.json`);
  writeFileSync(path, JSON.stringify(drifted));
  const apply = spawnCli(['topics', 'apply'], { ...pipeline.env, TB_TOPOLOGY: path, TB_LOG_LEVEL: 'error' });
  runs.push(apply);
  expect(await withTimeout('topics apply to exit', apply.exited, 60_000)).toEqual({ code: 3, signal: null });
  expect(apply.stdout()).toMatch(new RegExp(`drift: ${pipeline.topology.prefix.replace(/\./g, '\\.')}\\.due partitions: declared \\d+, actual \\d+`));
});

test('on a database whose tables never changed, topics apply creates the CDC topics and the repartitioner becomes ready', async () => {
  // Debezium captures only `timebucket`: for this database it never creates the CDC topics,
  // exactly as for tables that have not changed yet.
  const fresh = await createTestDatabase('fresh');
  const env = { ...pipeline.env, TB_DB_NAME: fresh.name, TB_LOG_LEVEL: 'error' };
  const cdcTopics = [`tbcdc.${fresh.name}.coupons`, `tbcdc.${fresh.name}.orders`];
  try {
    const apply = spawnCli(['topics', 'apply'], env);
    runs.push(apply);
    const exit = await withTimeout('topics apply to exit', apply.exited, 90_000);
    // Its stderr in the failure message: why it failed is the first thing to know.
    expect({ ...exit, stderr: exit.code === 0 ? '' : apply.stderr().slice(-3_000) }).toEqual({ code: 0, signal: null, stderr: '' });
    const meta = await admin.fetchTopicMetadata({ topics: cdcTopics });
    // Metadata lists topics in no particular order.
    expect(meta.topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual(cdcTopics.map((t) => [t, 4]).sort());

    const port = await freePort();
    const run = spawnCli(['run', '--roles', 'repartitioner'], { ...env, TB_HTTP_PORT: String(port) });
    runs.push(run);
    await waitFor('the repartitioner to be ready', async () => ((await httpStatus(port, '/readyz'))?.code === 200 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
  } finally {
    await admin.deleteTopics({ topics: cdcTopics }).catch(() => undefined);
    await fresh.drop();
  }
});

test('the main database not answering at start: the process waits for it, /readyz saying why, and starts once it answers', async () => {
  // The main database behind a port of the test's own: nothing listens there at first
  // (connections refused), then a forwarder to the real server does.
  const dbPort = await freePort();
  const { run, port } = await startExpirer({ TB_DB_PORT: String(dbPort) });
  const waiting = await waitFor(
    'start-up to have failed twice and be waiting',
    async () => {
      const s = await httpStatus(port, '/readyz');
      const body = s === undefined ? undefined : (JSON.parse(s.body) as { ready: boolean; starting?: { failedAttempts: number; error: string } });
      return s?.code === 503 && (body?.starting?.failedAttempts ?? 0) >= 2 ? body : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  expect(waiting.starting!.error).toMatch(/ECONNREFUSED/);
  expect(run.child.exitCode).toBeNull();

  const sockets = new Set<Socket>();
  const forwarder: Server = createServer((client) => {
    const upstream = connect(config.db.port, config.db.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => forwarder.listen(dbPort, '127.0.0.1', resolve));
  try {
    await waitFor(
      'the expirer to start and be ready once the database answers',
      async () => ((await httpStatus(port, '/readyz'))?.code === 200 ? true : undefined),
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    const ready = JSON.parse((await httpStatus(port, '/readyz'))!.body) as {
      starting?: unknown;
      databases: Record<string, { answering: boolean; checked: boolean }>;
    };
    expect(ready.starting).toBeUndefined();
    expect(ready.databases['main']).toMatchObject({ answering: true, checked: true });
  } finally {
    killRunning(runs.splice(0));
    await withTimeout('the process to exit', run.exited, 15_000);
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => forwarder.close(() => resolve()));
  }
});
