/**
 * The metric families of the rings: what the repartitioner routes onto them, and what the hold
 * stages (expirer, cascader) hold, release and forecast. Built unregistered (`registers` is
 * empty); createMetrics registers every family in the scrape order.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { counter, sourceGauge } from './metric-kinds';
import type { HoldStatsSource, MetricSources } from './metric-sources';

/** The repartitioner: entries routed per lane, the CDC it has yet to read. */
export function ingestMetrics(registers: Registry[], sources: MetricSources) {
  return {
    routed: new Counter({
      name: 'timebucket_routed_entries_total',
      help: 'Bucket entries written by the repartitioner, by lane (tier name or due)',
      labelNames: ['lane'] as const,
      registers,
    }),
    cdcLag: sourceGauge(
      registers,
      'timebucket_cdc_lag_messages',
      'CDC messages behind the end of the partitions this repartitioner holds, as of its last batch of each',
      () => sources.cdcLag,
    ),
  };
}

/** The hold stages: the forecast, cascades and re-routes, and each stage's held work. */
export function holdMetrics(registers: Registry[], sources: MetricSources) {
  return {
    forecastEntries: new Gauge({
      name: 'timebucket_forecast_entries',
      help: 'Entries held per bucket, by tier and position from the current bucket (1 the next, negative the released ones behind); tier "due": the due lane. Read from offsets by the cascader every TB_FORECAST_INTERVAL_MS; an upper bound of the work ahead (timebucket forecast)',
      labelNames: ['tier', 'position'] as const,
      registers,
    }),
    cascaded: counter(registers, 'timebucket_cascaded_entries_total', 'Entries of coarse buckets re-routed by the cascader'),
    rerouted: new Counter({
      name: 'timebucket_rerouted_entries_total',
      help: 'Entries found where this topology would not put them (a topology change, a writer clock ahead) and routed again, by the stage that read them',
      labelNames: ['stage'] as const,
      registers,
    }),
    dueLag: holdGauge(
      sources,
      registers,
      'timebucket_due_lag_messages',
      'Messages whose bucket has been released but are not finished (the scaling signal; raw lag counts scheduled work too)',
      (st) => st.dueLag,
    ),
    heldPartitions: holdGauge(
      sources,
      registers,
      'timebucket_held_partitions',
      'Partitions paused because their head bucket is not yet due',
      (st) => st.heldPartitions,
    ),
    inMemory: holdGauge(sources, registers, 'timebucket_in_memory_entries', 'Entries taken from Kafka and not yet finished', (st) => st.inMemory),
    largestPartitionInMemory: holdGauge(
      sources,
      registers,
      'timebucket_largest_partition_in_memory_entries',
      'Unfinished entries of the fullest partition (capped by TB_MAX_IN_MEMORY_PER_PARTITION)',
      (st) => st.largestPartitionInMemory,
    ),
  };
}

/** A gauge per hold stage, read from the stats each stage registered (trackHold) at scrape time. */
function holdGauge(sources: MetricSources, registers: Registry[], name: string, help: string, pick: (s: ReturnType<HoldStatsSource>) => number) {
  return new Gauge({
    name,
    help,
    labelNames: ['stage'] as const,
    registers,
    collect() {
      this.reset();
      for (const [stage, source] of sources.hold) this.set({ stage }, pick(source()));
    },
  });
}
