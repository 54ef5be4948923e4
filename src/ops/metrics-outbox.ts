/**
 * The metric families of the event outbox: the capture's lag behind the database (its probes) and
 * the retention that purges published rows. Built unregistered (`registers` is empty);
 * createMetrics registers every family in the scrape order.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { counter } from './metric-kinds';
import type { MetricSources } from './metric-sources';

/** Capture probes and their lag per database; retention purges and failures. */
export function outboxMetrics(registers: Registry[], sources: MetricSources) {
  const family = {
    captureLag: new Gauge({
      name: 'timebucket_outbox_capture_lag_seconds',
      help: 'Age of the oldest capture probe written into event_outbox and not yet back from Kafka (0: none pending), per database',
      labelNames: ['database'] as const,
      registers,
      collect() {
        const read = sources.captureLag;
        for (const [database, seconds] of Object.entries(read?.() ?? {})) this.set({ database }, seconds);
      },
    }),
    captureProbeFailures: counter(
      registers,
      'timebucket_outbox_capture_probe_failures_total',
      'Capture probes that could not be written (the database refused or was down)',
    ),
    outboxPurged: counter(
      registers,
      'timebucket_outbox_purged_total',
      'event_outbox rows deleted by retention (older than TB_OUTBOX_RETENTION_MS and than the capture watermark)',
    ),
    retentionFailures: new Counter({
      name: 'timebucket_outbox_retention_failures_total',
      help: 'Outbox retention passes that failed, by kind: retriable ones are retried with backoff; deterministic ones in a row turn the outbox-keeper role FAILED (/healthz)',
      labelNames: ['kind'] as const,
      registers,
    }),
  };
  for (const kind of ['retriable', 'deterministic'] as const) family.retentionFailures.inc({ kind }, 0);
  return family;
}
