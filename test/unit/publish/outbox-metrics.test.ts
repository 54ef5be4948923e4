import { entityNames } from '../../../src/core/entity-catalogue';
import { createMetrics } from '../../../src/ops/metrics';
import { catalogue } from './default-catalogue';

test('one scrape reads the outbox once for all its gauges, and the next scrape reads it again', async () => {
  const metrics = createMetrics({ entities: entityNames(catalogue) });
  let reads = 0;
  let rows = 10_000;
  metrics.trackOutbox(async () => {
    reads += 1;
    return { rows, oldestAgeSeconds: 12.5, poisonRows: 3 };
  });
  const first = await metrics.registry.metrics();
  expect(reads).toBe(1);
  expect(first).toMatch(/^timebucket_outbox_backlog_rows 10000$/m);
  expect(first).toMatch(/^timebucket_outbox_oldest_unpublished_age_seconds 12.5$/m);
  expect(first).toMatch(/^timebucket_outbox_poison_rows 3$/m);
  rows = 7;
  expect(await metrics.registry.metrics()).toMatch(/^timebucket_outbox_backlog_rows 7$/m);
  expect(reads).toBe(2);
});

test('the retention counter and the capped backlog are described as such', async () => {
  const metrics = createMetrics({ entities: entityNames(catalogue) });
  metrics.outboxPurged.inc(5);
  const text = await metrics.registry.metrics();
  expect(text).toMatch(/^timebucket_outbox_purged_total 5$/m);
  expect(text).toMatch(/^# HELP timebucket_outbox_backlog_rows .*up to 10000/m);
});
