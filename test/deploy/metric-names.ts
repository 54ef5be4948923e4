/** The metric names a timebucket process serves, and those a PromQL expression reads. */
import { Histogram } from 'prom-client';
import { createMetrics } from '../../src/ops/metrics';
import { trackReplicaLag } from '../../src/ops/metrics-replica';
import { defaultCatalogue } from '../support/catalogue';

/**
 * Every series name on a `timebucket run` process's /metrics (histograms with their suffixes),
 * the replica lag's among them (served where a replica is configured).
 */
export function servedMetricNames(): Set<string> {
  const names = new Set<string>();
  const { registry } = createMetrics({
    defaultMetrics: true,
    entities: defaultCatalogue.entities.map((e) => e.name),
    transitions: defaultCatalogue.transitions,
  });
  trackReplicaLag(registry, () => ({}));
  for (const m of registry.getMetricsAsArray()) {
    names.add(m.name);
    if (m instanceof Histogram) for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m.name}${suffix}`);
  }
  return names;
}

/** The names of timebucket's own and the standard process metrics an expression reads. */
export function metricsRead(expr: string): string[] {
  return expr.match(/\b(timebucket|process|nodejs)_\w+/g) ?? [];
}
