/**
 * The latency probe as the expirer role runs it (issue 45): the main database is reached through
 * a proxy this file holds (db/latency-probe.ts's connection with the rest), so for 1.5 s the
 * server answers nothing and then everything at once, as a stalled host does. The probe's answers
 * come late, each timed from its scheduled start, and the pacer backs off on them and names the
 * signal (timebucket_pacing_limited_by{signal="probe_latency"}, its tail in
 * timebucket_pacing_probe_seconds); once they are quick again it climbs back. The probe's thread, its samples into the database's pacer and the metric are the
 * service's own; only the stall is the test's.
 *
 * @lane isolated
 */
import { startFreezableProxy, type FreezableProxy } from '../../support/freezable-proxy';
import { metricSum } from '../../support/counts';
import { createTestPipeline, type TestPipeline } from '../../support/pipeline';
import { config as stackConfig } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';

let db: TestDatabase;
let proxy: FreezableProxy;
let pipeline: TestPipeline;

beforeAll(async () => {
  db = await createTestDatabase('pacing-probe');
  proxy = await startFreezableProxy({ host: stackConfig.db.host, port: stackConfig.db.port });
  pipeline = await createTestPipeline({
    env: { TB_DB_NAME: db.name, TB_DB_HOST: '127.0.0.1', TB_DB_PORT: String(proxy.port), TB_PACING: 'on', TB_PACING_PROBE_INTERVAL_MS: '50' },
  });
  await pipeline.start(['expirer']);
});

afterAll(async () => {
  proxy?.release();
  await pipeline?.stopAll();
  await proxy?.close();
  await db?.drop();
});

const gauge = (name: string) => pipeline.metrics.registry.getSingleMetric(name) as Parameters<typeof metricSum>[0];
const limitedByProbe = async () => (await metricSum(gauge('timebucket_pacing_limited_by'), { database: 'main', signal: 'probe_latency' })) === 1;

test('a database whose answers stall makes the pacer back off on probe_latency, and it climbs back once they are quick again', async () => {
  // The probe answers (its connection is up and its baseline learnt) before the stall.
  await waitFor(
    "the probe's baseline",
    async () => ((await metricSum(gauge('timebucket_pacing_probe_seconds'), { database: 'main', stat: 'baseline' })) > 0 ? true : undefined),
    { timeoutMs: 30_000 },
  );
  proxy.hold();
  // The stall's length (the fault itself, not a synchronisation).
  await new Promise((r) => setTimeout(r, 1_500));
  proxy.release();
  await waitFor('the pacer to back off on probe_latency', async () => ((await limitedByProbe()) ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
  expect(await metricSum(gauge('timebucket_pacing_state'), { database: 'main', state: 'backing-off' })).toBe(1);
  // The late answers were the tail of a second: far above the baseline.
  const tail = await metricSum(gauge('timebucket_pacing_probe_seconds'), { database: 'main', stat: 'tail' });
  expect(tail).toBeGreaterThan(0.2);
  // Quick answers again: no signal holds it back (recovered, or recovering on none).
  await waitFor('the probe signal to clear', async () => ((await limitedByProbe()) ? undefined : true), { timeoutMs: 60_000, intervalMs: 250 });
});
