/**
 * The metric families of what happens to rows: the expirer's transitions and their events, the
 * compensation scanner's catches, the reminders and digests. Built unregistered (`registers` is
 * empty); createMetrics registers every family in the scrape order.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { ReminderSkips } from '../core/bucket-entry';
import { counter, entityCounter, entityHistogram, sourceGauge } from './metric-kinds';
import type { MetricSources, SeriesAtZero } from './metric-sources';

const PATHS = ['stream', 'scanner'] as const;

/** The expirer: rows transitioned, how late, what it skipped or parked, the events it wrote. */
export function expiryMetrics(registers: Registry[], sources: MetricSources, zeroed: SeriesAtZero) {
  const family = {
    transitions: new Counter({
      name: 'timebucket_transitions_total',
      help: 'Rows transitioned (every transition of the entity), by entity and path',
      labelNames: ['entity', 'path'] as const,
      registers,
    }),
    delay: entityHistogram(
      registers,
      'timebucket_transition_delay_seconds',
      'Transition time minus due time, both by the database clock',
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
    ),
    notYetDue: entityCounter(
      registers,
      'timebucket_not_yet_due_total',
      'Entries found not yet due by the database clock and scheduled again (consumer clock ahead)',
    ),
    stale: entityCounter(registers, 'timebucket_stale_entries_total', 'Entries with nothing to do: already transitioned, no longer expirable, or superseded'),
    parked: entityCounter(
      registers,
      'timebucket_parked_entries_total',
      'Entries whose expiry failed deterministically on their own, parked in the DLQ (redrive them once fixed)',
    ),
    batchFailures: entityCounter(registers, 'timebucket_expiry_batch_failures_total', 'Expiry transactions that failed and were retried'),
    movedToWaiting: entityCounter(
      registers,
      'timebucket_waiting_lane_moves_total',
      "Due entries moved to their database's waiting lane (<prefix>.waiting.<database>) because the database was away",
    ),
    eventsWritten: counter(
      registers,
      'timebucket_events_written_total',
      'Events the transitions of this process wrote: into event_outbox (Connect publishes them from the binlog) or, the few that can never be published, to the DLQ (also in timebucket_dlq_records_total{stage="outbox"})',
    ),
    missingSchemaIds: sourceGauge(
      registers,
      'timebucket_event_schema_ids_missing',
      'Event types without a saved schema id (timebucket schemas register has not run for their schemas): their transitions wait; 0 when every one is known',
      () => sources.missingSchemaIds,
    ),
  };
  for (const entity of zeroed.entities) {
    for (const path of PATHS) family.transitions.inc({ entity, path }, 0);
    family.delay.zero({ entity });
    for (const c of [family.notYetDue, family.stale, family.parked, family.batchFailures, family.movedToWaiting]) c.inc({ entity }, 0);
  }
  return family;
}

/** The compensation scanner: rows it read and caught, pages that failed, its last pass. */
export function scannerMetrics(registers: Registry[], zeroed: SeriesAtZero) {
  const family = {
    scannerCaught: entityCounter(registers, 'timebucket_scanner_caught_total', 'Rows the compensation scanner transitioned: each one a row the stream missed'),
    scannerScanned: entityCounter(
      registers,
      'timebucket_scanner_rows_scanned_total',
      'Overdue rows the compensation scanner read (caught or already done by the stream meanwhile)',
    ),
    scannerPageFailures: entityCounter(
      registers,
      'timebucket_scanner_page_failures_total',
      'Scanner pages that failed (claim, read or transaction); their rows stay overdue and are read again',
    ),
    scannerLastPass: new Gauge({
      name: 'timebucket_scanner_last_pass_completed_timestamp_seconds',
      help: 'When this instance last finished a scanner pass (Unix time)',
      labelNames: ['entity'] as const,
      registers,
    }),
  };
  for (const entity of zeroed.entities) for (const c of [family.scannerCaught, family.scannerScanned, family.scannerPageFailures]) c.inc({ entity }, 0);
  return family;
}

/** Reminders and digests: sent, skipped and why, how late, how large. */
export function reminderMetrics(registers: Registry[], zeroed: SeriesAtZero) {
  const family = {
    remindersSent: new Counter({
      name: 'timebucket_reminders_sent_total',
      help: 'Reminders written to the outbox (a digest counts once), by entity and transition',
      labelNames: ['entity', 'transition'] as const,
      registers,
    }),
    remindersSkipped: new Counter({
      name: 'timebucket_reminders_skipped_total',
      help: 'Fire points that sent nothing: past when the row appeared, no user, moved, no longer expirable, due time passed, next fire point passed (superseded), reconfigured',
      labelNames: ['entity', 'transition', 'reason'] as const,
      registers,
    }),
    reminderLateness: entityHistogram(
      registers,
      'timebucket_reminder_lateness_seconds',
      'Reminder commit time minus its fire time, both by the database clock',
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
    ),
    digestSize: entityHistogram(registers, 'timebucket_reminder_digest_rows', 'Rows listed per digest', [1, 2, 3, 5, 10, 20, 50, 100, 500]),
  };
  for (const entity of zeroed.entities) {
    family.reminderLateness.zero({ entity });
    family.digestSize.zero({ entity });
  }
  for (const { entity, name: transition } of zeroed.transitions) {
    family.remindersSent.inc({ entity, transition }, 0);
    for (const reason of ReminderSkips) family.remindersSkipped.inc({ entity, transition, reason }, 0);
  }
  return family;
}
