/**
 * The capture probe on brokers that run Kafka's default group.initial.rebalance.delay.ms (3 s,
 * this stack's, as production brokers do): each process reads the probe topic with a group of
 * its own, from the end, and its first probes are written before that group has a position. A
 * probe its reader never sees must not hold the capture lag up: the lag falls back under a
 * couple of seconds soon after a start, and again after a restart of the process that probes
 * (a rollout), or TimebucketOutboxCaptureLag would page after every one.
 */
import { createTestPipeline, TestPipeline } from '../support/pipeline';
import { waitFor } from '../support/wait-for';

let pipeline: TestPipeline;

beforeAll(async () => {
  pipeline = await createTestPipeline({ env: { TB_OUTBOX_PROBE_INTERVAL_MS: '500' } });
});

afterAll(async () => {
  await pipeline.stopAll();
});

async function captureLag(): Promise<number | undefined> {
  const metric = await pipeline.metrics.captureLag.get();
  return metric.values.find((v) => v.labels['database'] === 'main')?.value;
}

test('capture lag falls back under 2 s after the process that probes starts, and again after it restarts', async () => {
  for (const start of ['first start', 'restart']) {
    await pipeline.start(['relay']);
    const startedAt = Date.now();
    // Past the first 5 s the probes written before the group had its position are older than
    // 2 s: a lag under 2 s then means they no longer count.
    await waitFor(`capture lag under 2 s, 5 s after the ${start}`, async () => {
      const lag = await captureLag();
      return Date.now() - startedAt > 5_000 && lag !== undefined && lag < 2 ? true : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    await pipeline.stopAll();
  }
});
