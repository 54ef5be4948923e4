/**
 * Metrics, one prefix, base units. A registry is created by the caller and handed in (never the
 * global one), so tests and several pipelines in one process do not mix their numbers.
 * Labels are bounded: entity (the entities file's, a handful), path (3), lane/tier (a handful),
 * stage (3), code (a handful), what (the control switches: the entities and the scanner),
 * position (the forecast's: one per topic of a tier's ring).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ReminderSkips } from '../core/bucket-entry';

export type Metrics = ReturnType<typeof createMetrics>;

/** What a hold stage reports at scrape time. */
export type HoldStatsSource = () => Readonly<{ heldPartitions: number; inMemory: number; largestPartitionInMemory: number; dueLag: number }>;
/** The control switches as this process applies them, read at scrape time. */
export type ControlSource = () => ReadonlyArray<Readonly<{ what: string; paused: boolean; perSecond: number | null }>>;

const PATHS = ['stream', 'scanner'] as const;

/**
 * `entities`: the catalogue's entity names (entityNames), whose series start at 0;
 * `transitions`: the catalogue's transitions, whose reminder series start at 0 too.
 */
export function createMetrics(opts: {
  entities: readonly string[];
  transitions?: ReadonlyArray<Readonly<{ entity: string; name: string }>>;
  registry?: Registry;
  defaultMetrics?: boolean;
}) {
  const registry = opts.registry ?? new Registry();
  const registers = [registry];
  // Gauges are read when scraped, from the stages that registered a source.
  const holdSources = new Map<string, HoldStatsSource>();
  let controlSource: ControlSource | undefined;
  let cdcLagSource: (() => number) | undefined;
  let captureLagSource: (() => Readonly<Record<string, number>>) | undefined;
  let missingSchemaIdsSource: (() => number) | undefined;
  const holdGauge = (name: string, help: string, pick: (s: ReturnType<HoldStatsSource>) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['stage'] as const,
      registers,
      collect() {
        this.reset();
        for (const [stage, source] of holdSources) this.set({ stage }, pick(source()));
      },
    });
  // Standard names (process_*, nodejs_*), unprefixed, so stock Node.js dashboards and alerts work.
  if (opts.defaultMetrics === true) collectDefaultMetrics({ register: registry });
  const metrics = {
    registry,
    transitions: new Counter({
      name: 'timebucket_transitions_total',
      help: 'Rows transitioned (every transition of the entity), by entity and path',
      labelNames: ['entity', 'path'] as const,
      registers,
    }),
    delay: new Histogram({
      name: 'timebucket_transition_delay_seconds',
      help: 'Transition time minus due time, both by the database clock',
      labelNames: ['entity'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
      registers,
    }),
    notYetDue: new Counter({
      name: 'timebucket_not_yet_due_total',
      help: 'Entries found not yet due by the database clock and scheduled again (consumer clock ahead)',
      labelNames: ['entity'] as const,
      registers,
    }),
    stale: new Counter({
      name: 'timebucket_stale_entries_total',
      help: 'Entries with nothing to do: already transitioned, no longer expirable, or superseded',
      labelNames: ['entity'] as const,
      registers,
    }),
    parked: new Counter({
      name: 'timebucket_parked_entries_total',
      help: 'Entries whose expiry failed deterministically on their own, parked in the DLQ (redrive them once fixed)',
      labelNames: ['entity'] as const,
      registers,
    }),
    scannerCaught: new Counter({
      name: 'timebucket_scanner_caught_total',
      help: 'Rows the compensation scanner transitioned: each one a row the stream missed',
      labelNames: ['entity'] as const,
      registers,
    }),
    scannerScanned: new Counter({
      name: 'timebucket_scanner_rows_scanned_total',
      help: 'Overdue rows the compensation scanner read (caught or already done by the stream meanwhile)',
      labelNames: ['entity'] as const,
      registers,
    }),
    scannerPageFailures: new Counter({
      name: 'timebucket_scanner_page_failures_total',
      help: 'Scanner pages that failed (claim, read or transaction); their rows stay overdue and are read again',
      labelNames: ['entity'] as const,
      registers,
    }),
    scannerLastPass: new Gauge({
      name: 'timebucket_scanner_last_pass_completed_timestamp_seconds',
      help: 'When this instance last finished a scanner pass (Unix time)',
      labelNames: ['entity'] as const,
      registers,
    }),
    producerReplacements: new Counter({
      name: 'timebucket_producer_replacements_total',
      help: 'Producers retired after a failed send (a fresh one, with fresh sequence numbers, takes over)',
      registers,
    }),
    breakerState: new Gauge({
      name: 'timebucket_circuit_breaker_state',
      help: 'Circuit breaker state: 0 closed, 1 half-open, 2 open',
      labelNames: ['breaker'] as const,
      registers,
    }),
    databaseUp: new Gauge({
      name: 'timebucket_database_up',
      help: "Whether the database answers this process's pings (1) or not (0); 0 too while one that did not answer at start has not had its tables checked (its batches wait)",
      labelNames: ['database'] as const,
      registers,
    }),
    batchFailures: new Counter({
      name: 'timebucket_expiry_batch_failures_total',
      help: 'Expiry transactions that failed and were retried',
      labelNames: ['entity'] as const,
      registers,
    }),
    deadLetters: new Counter({
      name: 'timebucket_dlq_records_total',
      help: 'Records sent to the DLQ, by the stage that rejected them and the error code',
      labelNames: ['stage', 'code'] as const,
      registers,
    }),
    routed: new Counter({
      name: 'timebucket_routed_entries_total',
      help: 'Bucket entries written by the repartitioner, by lane (tier name or due)',
      labelNames: ['lane'] as const,
      registers,
    }),
    forecastEntries: new Gauge({
      name: 'timebucket_forecast_entries',
      help: 'Entries held per bucket, by tier and position from the current bucket (1 the next, negative the released ones behind); tier "due": the due lane. Read from offsets by the cascader every TB_FORECAST_INTERVAL_MS; an upper bound of the work ahead (timebucket forecast)',
      labelNames: ['tier', 'position'] as const,
      registers,
    }),
    cascaded: new Counter({
      name: 'timebucket_cascaded_entries_total',
      help: 'Entries of coarse buckets re-routed by the cascader',
      registers,
    }),
    rerouted: new Counter({
      name: 'timebucket_rerouted_entries_total',
      help: 'Entries found where this topology would not put them (a topology change, a writer clock ahead) and routed again, by the stage that read them',
      labelNames: ['stage'] as const,
      registers,
    }),
    dueLag: holdGauge(
      'timebucket_due_lag_messages',
      'Messages whose bucket has been released but are not finished (the scaling signal; raw lag counts scheduled work too)',
      (st) => st.dueLag,
    ),
    heldPartitions: holdGauge('timebucket_held_partitions', 'Partitions paused because their head bucket is not yet due', (st) => st.heldPartitions),
    inMemory: holdGauge('timebucket_in_memory_entries', 'Entries taken from Kafka and not yet finished', (st) => st.inMemory),
    largestPartitionInMemory: holdGauge(
      'timebucket_largest_partition_in_memory_entries',
      'Unfinished entries of the fullest partition (capped by TB_MAX_IN_MEMORY_PER_PARTITION)',
      (st) => st.largestPartitionInMemory,
    ),
    captureLag: new Gauge({
      name: 'timebucket_outbox_capture_lag_seconds',
      help: 'Age of the oldest capture probe written into event_outbox and not yet back from Kafka (0: none pending), per database',
      labelNames: ['database'] as const,
      registers,
      collect() {
        for (const [database, seconds] of Object.entries(captureLagSource?.() ?? {})) this.set({ database }, seconds);
      },
    }),
    captureProbeFailures: new Counter({
      name: 'timebucket_outbox_capture_probe_failures_total',
      help: 'Capture probes that could not be written (the database refused or was down)',
      registers,
    }),
    eventsWritten: new Counter({
      name: 'timebucket_events_written_total',
      help: 'Events the transitions of this process wrote: into event_outbox (Connect publishes them from the binlog) or, the few that can never be published, to the DLQ (also in timebucket_dlq_records_total{stage="outbox"})',
      registers,
    }),
    missingSchemaIds: new Gauge({
      name: 'timebucket_event_schema_ids_missing',
      help: 'Event types without a saved schema id (timebucket schemas register has not run for their schemas): their transitions wait; 0 when every one is known',
      registers,
      collect() {
        if (missingSchemaIdsSource) this.set(missingSchemaIdsSource());
      },
    }),
    cdcLag: new Gauge({
      name: 'timebucket_cdc_lag_messages',
      help: 'CDC messages behind the end of the partitions this repartitioner holds, as of its last batch of each',
      registers,
      collect() {
        if (cdcLagSource) this.set(cdcLagSource());
      },
    }),
    outboxPurged: new Counter({
      name: 'timebucket_outbox_purged_total',
      help: 'event_outbox rows deleted by retention (older than TB_OUTBOX_RETENTION_MS and than the capture watermark)',
      registers,
    }),
    retentionFailures: new Counter({
      name: 'timebucket_outbox_retention_failures_total',
      help: 'Outbox retention passes that failed, by kind: retriable ones are retried with backoff; deterministic ones in a row turn the outbox-keeper role FAILED (/healthz)',
      labelNames: ['kind'] as const,
      registers,
    }),
    controlPaused: new Gauge({
      name: 'timebucket_control_paused',
      help: 'Whether this process holds the switch paused (timebucket ctl pause): 1 paused, 0 running (1 until the switches were first read)',
      labelNames: ['what'] as const,
      registers,
      collect() {
        for (const s of controlSource?.() ?? []) this.set({ what: s.what }, s.paused ? 1 : 0);
      },
    }),
    controlThrottle: new Gauge({
      name: 'timebucket_control_throttle_per_second',
      help: 'Throttle on the switch in transitions per second and per process (timebucket ctl throttle); 0 when none',
      labelNames: ['what'] as const,
      registers,
      collect() {
        for (const s of controlSource?.() ?? []) this.set({ what: s.what }, s.perSecond ?? 0);
      },
    }),
    remindersSent: new Counter({
      name: 'timebucket_reminders_sent_total',
      help: 'Reminders written to the outbox (a digest counts once), by entity and transition',
      labelNames: ['entity', 'transition'] as const,
      registers,
    }),
    remindersSkipped: new Counter({
      name: 'timebucket_reminders_skipped_total',
      help: 'Fire points that sent nothing: past when the row appeared, no user, moved, no longer expirable, due time passed',
      labelNames: ['entity', 'transition', 'reason'] as const,
      registers,
    }),
    reminderLateness: new Histogram({
      name: 'timebucket_reminder_lateness_seconds',
      help: 'Reminder commit time minus its fire time, both by the database clock',
      labelNames: ['entity'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    }),
    digestSize: new Histogram({
      name: 'timebucket_reminder_digest_rows',
      help: 'Rows listed per digest',
      labelNames: ['entity'] as const,
      buckets: [1, 2, 3, 5, 10, 20, 50, 100, 500],
      registers,
    }),
    controlPollFailures: new Counter({
      name: 'timebucket_control_poll_failures_total',
      help: 'Failed reads of the control switches (the last known state stays in force)',
      registers,
    }),
    /** Registers a hold stage's stats for the due-lag, held-partition and in-memory gauges. */
    trackHold(stage: string, source: HoldStatsSource): void {
      holdSources.set(stage, source);
    },
    /** Registers the repartitioner's CDC lag for timebucket_cdc_lag_messages. */
    trackCdcLag(source: () => number): void {
      cdcLagSource = source;
    },
    /** Registers the event encoder's count of event types without a schema id. */
    trackMissingSchemaIds(source: () => number): void {
      missingSchemaIdsSource = source;
    },
    /** Registers the capture probe's lag per database for timebucket_outbox_capture_lag_seconds. */
    trackCaptureLag(source: () => Readonly<Record<string, number>>): void {
      captureLagSource = source;
    },
    trackControl(source: ControlSource): void {
      controlSource = source;
    },
  };
  // Series that exist from the start, at 0, rather than appearing with their first event: a
  // rate() or an alert over them then has data (and a dashboard a line) from the first scrape.
  for (const kind of ['retriable', 'deterministic'] as const) metrics.retentionFailures.inc({ kind }, 0);
  for (const entity of opts.entities) {
    for (const path of PATHS) metrics.transitions.inc({ entity, path }, 0);
    metrics.delay.zero({ entity });
    for (const c of [
      metrics.notYetDue,
      metrics.stale,
      metrics.parked,
      metrics.scannerCaught,
      metrics.scannerScanned,
      metrics.scannerPageFailures,
      metrics.batchFailures,
    ])
      c.inc({ entity }, 0);
    metrics.reminderLateness.zero({ entity });
    metrics.digestSize.zero({ entity });
  }
  for (const { entity, name: transition } of opts.transitions ?? []) {
    metrics.remindersSent.inc({ entity, transition }, 0);
    for (const reason of ReminderSkips) metrics.remindersSkipped.inc({ entity, transition, reason }, 0);
  }
  return metrics;
}
