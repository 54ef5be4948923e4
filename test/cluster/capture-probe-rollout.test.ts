/**
 * The capture probe on a broker with Kafka's default group.initial.rebalance.delay.ms (3 s, which
 * the cluster stack runs, as production brokers do): across a rollout of the process that probes
 * (SIGTERM, then a new process under a new instance id, hence a new probe group that starts at
 * the end of the probe topic) its capture lag falls back to seconds, so
 * TimebucketOutboxCaptureLag (lag > 60 s for 5 min) clears instead of paging after every rollout.
 *
 * Why it could fail: a new group has no position for its first 3 s, and the probes written then
 * are never read by it. Were they kept as the oldest pending, the lag would be the process's
 * age, growing for good.
 */
import type { Admin } from 'kafkajs';
import { ConfigResourceTypes } from 'kafkajs';
import { createDb, Db } from '../../src/db/knex';
import { createKafka } from '../../src/kafka/client';
import { probeTopic } from '../../src/core/topology';
import { config as baseConfig, logger } from '../support/stack';
import { createTestPipeline, TestPipeline } from '../support/pipeline';
import { CliRun, freePort, httpStatus, killRunning, spawnCli } from '../support/cli';
import { waitFor, withTimeout } from '../support/wait-for';

let db: Db;
let admin: Admin;
let pipeline: TestPipeline;
const runs: CliRun[] = [];

beforeAll(async () => {
  db = createDb(baseConfig.db);
  admin = createKafka(baseConfig.kafka, logger, '-test-probe-rollout').admin();
  await admin.connect();
  pipeline = await createTestPipeline();
});

afterAll(async () => {
  killRunning(runs.splice(0));
  await pipeline.stopAll();
  await admin.disconnect();
  await db.destroy();
});

/** The outbox-keeper role as a process of its own, probing every 500 ms. */
async function startKeeper(instance: string): Promise<{ run: CliRun; port: number }> {
  const port = await freePort();
  const run = spawnCli(['run', '--roles', 'outbox-keeper'], {
    ...pipeline.env,
    TB_LOG_LEVEL: 'error',
    TB_HTTP_PORT: String(port),
    TB_INSTANCE_ID: `${instance}-${process.pid}`,
    TB_OUTBOX_PROBE_INTERVAL_MS: '500',
  });
  runs.push(run);
  return { run, port };
}

async function captureLagSeconds(port: number): Promise<number | undefined> {
  const metrics = await httpStatus(port, '/metrics');
  const m = metrics?.body.match(/^timebucket_outbox_capture_lag_seconds\{database="main"\} (\S+)$/m);
  return m === null || m === undefined ? undefined : Number(m[1]);
}

/**
 * When (epoch ms, this machine's clock, which the probe's writer shares) the first probe written
 * since `since` was: the previous process has exited by then, so it is the new process's.
 */
async function firstProbeSince(since: number): Promise<number | undefined> {
  const row = (await db('event_outbox')
    .where('topic', probeTopic(pipeline.topology))
    .where('ce_time', '>=', new Date(since).toISOString())
    .orderBy('id')
    .first('ce_time')) as { ce_time: string } | undefined;
  return row === undefined ? undefined : Date.parse(row.ce_time);
}

test("the broker runs Kafka's default group.initial.rebalance.delay.ms (3 s)", async () => {
  const { brokers } = await admin.describeCluster();
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: brokers.map((b) => ({ type: ConfigResourceTypes.BROKER, name: String(b.nodeId), configNames: ['group.initial.rebalance.delay.ms'] })),
  });
  expect(resources.map((r) => r.configEntries.find((e) => e.configName === 'group.initial.rebalance.delay.ms')?.configValue)).toEqual(['3000', '3000', '3000']);
});

test('a rollout of the process that probes: on each new process the capture lag falls back to seconds', async () => {
  for (const instance of ['probe-rollout-a', 'probe-rollout-b']) {
    const spawnedAt = Date.now();
    const { run, port } = await startKeeper(instance);
    await waitFor(`${instance} to be ready`, async () => ((await httpStatus(port, '/readyz'))?.code === 200 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const firstProbeAt = await waitFor(`${instance}'s first probe written`, () => firstProbeSince(spawnedAt), { timeoutMs: 30_000, intervalMs: 100 });
    // Low at a moment when the process's first probe is over 8 s old (well past the rebalance
    // delay, so its first probes were written before its group had a position): were they held
    // as pending, the lag would be at least their age. 3 s leaves room for a loaded Connect.
    await waitFor(
      `${instance}'s capture lag under 3 s once its first probe is over 8 s old`,
      async () => {
        const lag = await captureLagSeconds(port);
        return lag !== undefined && lag < 3 && Date.now() - firstProbeAt > 8_000 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    run.child.kill('SIGTERM');
    expect(await withTimeout(`${instance} to exit`, run.exited, 30_000)).toEqual({ code: 0, signal: null });
  }
}, 240_000);
