/**
 * The metric families every role shares: its connections (producers, breakers, databases), the
 * records it dead-lettered, and the operator's control switches as it applies them. Built
 * unregistered (`registers` is empty); createMetrics registers every family in the scrape order.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { counter } from './metric-kinds';
import type { ControlSource, MetricSources } from './metric-sources';

/** Producers replaced, breakers, databases up, records sent to the DLQ. */
export function connectionMetrics(registers: Registry[]) {
  return {
    producerReplacements: counter(
      registers,
      'timebucket_producer_replacements_total',
      'Producers retired after a failed send (a fresh one, with fresh sequence numbers, takes over)',
    ),
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
    deadLetters: new Counter({
      name: 'timebucket_dlq_records_total',
      help: 'Records sent to the DLQ, by the stage that rejected them and the error code',
      labelNames: ['stage', 'code'] as const,
      registers,
    }),
  };
}

/** The control switches: paused, throttled, and failed reads of them. */
export function controlMetrics(registers: Registry[], sources: MetricSources) {
  return {
    controlPaused: switchGauge(
      registers,
      sources,
      'timebucket_control_paused',
      'Whether this process holds the switch paused (timebucket ctl pause): 1 paused, 0 running (1 until the switches were first read)',
      (s) => (s.paused ? 1 : 0),
    ),
    controlThrottle: switchGauge(
      registers,
      sources,
      'timebucket_control_throttle_per_second',
      'Throttle on the switch in transitions per second and per process (timebucket ctl throttle); 0 when none',
      (s) => s.perSecond ?? 0,
    ),
    controlPollFailures: counter(
      registers,
      'timebucket_control_poll_failures_total',
      'Failed reads of the control switches (the last known state stays in force)',
    ),
  };
}

/** A gauge per control switch, read from the switches as this process applies them (trackControl) at scrape time. */
function switchGauge(registers: Registry[], sources: MetricSources, name: string, help: string, value: (s: ReturnType<ControlSource>[number]) => number) {
  return new Gauge({
    name,
    help,
    labelNames: ['what'] as const,
    registers,
    collect() {
      const read = sources.control;
      for (const s of read?.() ?? []) this.set({ what: s.what }, value(s));
    },
  });
}
