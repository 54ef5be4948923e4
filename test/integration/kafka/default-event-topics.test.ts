/**
 * A topology written before an event type existed (the shipped entities file gained the two
 * reminder events; a deployment's own topology names only the two transitions): `topics apply`
 * creates the default topics of the others (<prefix>.events.<type>) and `run` starts, where it
 * used to exit 78. In a database of the file's own, with topics of its own.
 *
 * @lane isolated
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin } from 'kafkajs';
import { createKafka } from '../../../src/kafka/client';
import { config, logger, uniqueName } from '../../support/stack';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { CliRun, freePort, httpStatus, killRunning, spawnCli } from '../../support/cli';
import { waitFor, withTimeout } from '../../support/wait-for';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let admin: Admin;
let pipeline: TestPipeline;
let testDb: TestDatabase;
const runs: CliRun[] = [];

beforeAll(async () => {
  admin = createKafka(config.kafka, logger, '-test-default-events').admin();
  await admin.connect();
  testDb = await createTestDatabase('default_events');
  pipeline = await createTestPipeline({ env: { TB_DB_NAME: testDb.name } });
});

afterAll(async () => {
  killRunning(runs.splice(0));
  await admin.disconnect();
  await testDb?.drop();
});

test('a topology naming two of the four events: topics apply creates the default topics of the others, and run starts instead of exiting 78', async () => {
  const prefix = uniqueName('tbolder').replace(/-/g, '');
  const named = pipeline.topology.events
    .filter((e) => e.type === 'COUPON_EXPIRED' || e.type === 'ORDER_CANCELLED')
    .map((e) => ({ ...e, topic: `${prefix}.events.${e.type.toLowerCase()}-v1` }));
  const path = join(tmpdir(), `${prefix}.json`);
  writeFileSync(path, JSON.stringify({ ...pipeline.topology, prefix, events: named }));
  const env = { ...pipeline.env, TB_TOPOLOGY: path, TB_GROUP_PREFIX: prefix, TB_LOG_LEVEL: 'error' };
  try {
    const apply = spawnCli(['topics', 'apply'], env);
    runs.push(apply);
    const exit = await withTimeout('topics apply to exit', apply.exited, 90_000);
    expect({ ...exit, stderr: exit.code === 0 ? '' : apply.stderr().slice(-3_000) }).toEqual({ code: 0, signal: null, stderr: '' });
    const events = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.events.`)).sort();
    expect(events).toEqual([...named.map((e) => e.topic), `${prefix}.events.coupon-expiring-soon`, `${prefix}.events.user-coupons-expiring-soon`].sort());

    const port = await freePort();
    // The expirer resolves every event's topic at start (its event writer): it must start.
    const run = spawnCli(['run', '--roles', 'expirer'], { ...env, TB_HTTP_PORT: String(port) });
    runs.push(run);
    await waitFor('the expirer to be ready', async () => ((await httpStatus(port, '/readyz'))?.code === 200 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    expect(run.child.exitCode).toBeNull();
  } finally {
    killRunning(runs.splice(0));
    await admin.deleteTopics({ topics: (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`)) }).catch(() => undefined);
  }
});
