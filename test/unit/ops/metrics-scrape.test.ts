/**
 * A scrape never waits on I/O: prom-client awaits every collector, so one that read a database
 * would make /metrics fail or hang in every process while that database is down, the outage its
 * breaker alerts exist for. Gauges read what the stages already hold (their sources), never a
 * server.
 */
import { createMetrics } from '../../../src/ops/metrics';

test('no collector of timebucket_* metrics returns a promise', () => {
  const metrics = createMetrics({ entities: ['coupon'], transitions: [{ entity: 'coupon', name: 'expired' }] });
  metrics.trackHold('expirer', () => ({ heldPartitions: 1, inMemory: 2, largestPartitionInMemory: 2, dueLag: 0 }));
  metrics.trackCdcLag(() => 0);
  metrics.trackMissingSchemaIds(() => 0);
  metrics.trackCaptureLag(() => ({ main: 0 }));
  metrics.trackControl(() => [{ what: 'coupon', paused: false, perSecond: null }]);
  const collectors = metrics.registry
    .getMetricsAsArray()
    .map((m) => ({ name: m.name, collect: (m as unknown as { collect?: () => unknown }).collect }))
    .filter((m) => m.collect !== undefined);
  expect(collectors.length).toBeGreaterThan(0);
  const asynchronous = collectors.filter((m) => m.collect!.call(metrics.registry.getSingleMetric(m.name)) instanceof Promise).map((m) => m.name);
  expect(asynchronous).toEqual([]);
});
