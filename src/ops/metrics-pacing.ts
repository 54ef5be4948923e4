/**
 * The expirer's pacing per database (hold/database-pacing.ts, core/pacer.ts): the rate each
 * database may take, the state its pacer is in and the signal that holds it back, and how much of
 * the lateness budget its oldest due row has used. Built unregistered (`registers` is empty);
 * createMetrics registers them in the scrape order. Labels bounded: database (the configured
 * ones, set by the expirer role when it starts), state (4), signal (5), stat (2).
 */
import { Gauge, type Registry } from 'prom-client';
import { PACER_SIGNALS, PACER_STATES, type PacerView } from '../core/pacer';

export function pacingMetrics(registers: Registry[]) {
  return {
    pacingRate: new Gauge({
      name: 'timebucket_pacing_rate_rows_per_second',
      help: 'Rows a second the expirer may send the database now (its pacer; +Inf when unpaced); `ctl throttle` may cap an entity lower',
      labelNames: ['database'] as const,
      registers,
    }),
    pacingState: new Gauge({
      name: 'timebucket_pacing_state',
      help: "1 for the pacer's state (healthy; starting: a drain's rate doubling each second; backing-off; budget-bound: the lateness budget, not health, sets the rate), 0 for the others",
      labelNames: ['database', 'state'] as const,
      registers,
    }),
    pacingLimitedBy: new Gauge({
      name: 'timebucket_pacing_limited_by',
      help: '1 for the signal holding the rate back (probe_latency, commit_latency, threads_running, history_list, replica_lag), 0 for the others; all 0 when healthy',
      labelNames: ['database', 'signal'] as const,
      registers,
    }),
    pacingProbe: new Gauge({
      name: 'timebucket_pacing_probe_seconds',
      help: "The latency probe's answers (SELECT 1, db/latency-probe.ts): the tail of the last second's (the 90th percentile) and its quiet baseline",
      labelNames: ['database', 'stat'] as const,
      registers,
    }),
    pacingBudgetUsed: new Gauge({
      name: 'timebucket_pacing_budget_used_ratio',
      help: "The oldest due row waiting for the database: its lateness as a share of its entity's lateness budget (0 when none waits)",
      labelNames: ['database'] as const,
      registers,
    }),
  };
}

export type PacingFamilies = ReturnType<typeof pacingMetrics>;

/** A pacer's view of `database` into its series (every state and signal: 1 for the one that holds, 0 for the rest). */
export function recordPacing(m: PacingFamilies, database: string, view: PacerView): void {
  m.pacingRate.set({ database }, view.rate);
  for (const state of PACER_STATES) m.pacingState.set({ database, state }, view.state === state ? 1 : 0);
  for (const signal of PACER_SIGNALS) m.pacingLimitedBy.set({ database, signal }, view.limitedBy === signal ? 1 : 0);
  m.pacingBudgetUsed.set({ database }, view.budgetUsed);
  if (view.probeTailMs !== undefined) m.pacingProbe.set({ database, stat: 'tail' }, view.probeTailMs / 1_000);
  if (view.probeBaselineMs !== undefined) m.pacingProbe.set({ database, stat: 'baseline' }, view.probeBaselineMs / 1_000);
}
