/**
 * Metrics, one prefix, base units. A registry is created by the caller and handed in (never the
 * global one), so tests and several pipelines in one process do not mix their numbers.
 * Labels are bounded: entity (the entities file's, a handful), path (3), lane/tier (a handful),
 * stage (3), code (a handful), what (the control switches: the entities and the scanner),
 * position (the forecast's: one per topic of a tier's ring), database (the configured ones).
 *
 * The families, by what they measure: metrics-transitions.ts (expirer, scanner, reminders),
 * metrics-rings.ts (repartitioner, hold stages), metrics-outbox.ts (capture, retention),
 * metrics-process.ts (connections, dead letters, control switches), metrics-first-pass.ts (the
 * first-pass hold), metrics-pacing.ts (the expirer's pacer per database). Gauges read at scrape
 * time what the stages registered (metric-sources.ts).
 */
import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';
import type { ControlSource, HoldStatsSource, MetricSources, SeriesAtZero } from './metric-sources';
import { expiryMetrics, reminderMetrics, scannerMetrics } from './metrics-transitions';
import { holdMetrics, ingestMetrics } from './metrics-rings';
import { outboxMetrics } from './metrics-outbox';
import { connectionMetrics, controlMetrics } from './metrics-process';
import { firstPassMetrics } from './metrics-first-pass';
import { pacingMetrics } from './metrics-pacing';

export type { ControlSource, HoldStatsSource } from './metric-sources';
export type Metrics = ReturnType<typeof createMetrics>;

type Families = ReturnType<typeof families>;

/**
 * The order of /metrics, as it was when all the families were declared in one list: a scrape stays
 * byte for byte what it was, whichever file a family is declared in.
 */
const SCRAPE_ORDER = [
  ...['transitions', 'delay', 'notYetDue', 'stale', 'parked'],
  ...['scannerCaught', 'scannerScanned', 'scannerPageFailures', 'scannerLastPass'],
  ...['producerReplacements', 'breakerState', 'databaseUp', 'batchFailures', 'movedToWaiting', 'deadLetters', 'routed'],
  ...['forecastEntries', 'cascaded', 'rerouted', 'dueLag', 'heldPartitions', 'inMemory', 'largestPartitionInMemory'],
  ...['captureLag', 'captureProbeFailures', 'eventsWritten', 'missingSchemaIds', 'cdcLag', 'outboxPurged', 'retentionFailures'],
  ...['controlPaused', 'controlThrottle', 'remindersSent', 'remindersSkipped', 'reminderLateness', 'digestSize', 'controlPollFailures'],
  ...['firstPassHeld', 'firstPassHeldEntries'],
  ...['pacingRate', 'pacingState', 'pacingLimitedBy', 'pacingBudgetUsed', 'pacingProbe'],
] as const satisfies ReadonlyArray<keyof Families>;

// A family missing from SCRAPE_ORDER would be missing from /metrics: its key turns `never` here,
// and createMetrics no longer compiles.
type Unlisted = Exclude<keyof Families, (typeof SCRAPE_ORDER)[number]>;

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
  // Gauges are read when scraped, from the stages that registered a source.
  const sources: MetricSources = { hold: new Map() };
  const built = families(sources, { entities: opts.entities, transitions: opts.transitions ?? [] });
  // Standard names (process_*, nodejs_*), unprefixed, so stock Node.js dashboards and alerts work.
  if (opts.defaultMetrics === true) collectDefaultMetrics({ register: registry });
  registerInScrapeOrder(registry, built);
  return {
    registry,
    ...built,
    /** Registers a hold stage's stats for the due-lag, held-partition and in-memory gauges. */
    trackHold(stage: string, source: HoldStatsSource): void {
      sources.hold.set(stage, source);
    },
    /** Registers the repartitioner's CDC lag for timebucket_cdc_lag_messages. */
    trackCdcLag(source: () => number): void {
      sources.cdcLag = source;
    },
    /** Registers the event encoder's count of event types without a schema id. */
    trackMissingSchemaIds(source: () => number): void {
      sources.missingSchemaIds = source;
    },
    /** Registers the capture probe's lag per database for timebucket_outbox_capture_lag_seconds. */
    trackCaptureLag(source: () => Readonly<Record<string, number>>): void {
      sources.captureLag = source;
    },
    trackControl(source: ControlSource): void {
      sources.control = source;
    },
  };
}

/** Every family, built unregistered. */
function families(sources: MetricSources, zeroed: SeriesAtZero) {
  const none: Registry[] = [];
  return {
    ...expiryMetrics(none, sources, zeroed),
    ...scannerMetrics(none, zeroed),
    ...reminderMetrics(none, zeroed),
    ...ingestMetrics(none, sources),
    ...holdMetrics(none, sources),
    ...outboxMetrics(none, sources),
    ...connectionMetrics(none),
    ...controlMetrics(none, sources),
    ...firstPassMetrics(none, zeroed),
    ...pacingMetrics(none),
  };
}

function registerInScrapeOrder(registry: Registry, built: Families & Record<Unlisted, never>): void {
  for (const key of SCRAPE_ORDER) registry.registerMetric(built[key] as Metric);
}
