/**
 * One run's figures as they go into the results file (snake_case, like the other benches'
 * JSON lines). Times are seconds, delays milliseconds; null where a figure does not apply
 * (events for contenders that publish nothing) or could not be measured (a failed run).
 */
import type { PhaseReport } from '../lib/foreground';
import type { ReplicaReport } from '../lib/replica-watch';
import type { PacingReport } from './contenders/pacing-watch';
import { loadavg } from 'node:os';
import type { DelaySummary } from '../lib/percentiles';
import type { EventsSeen } from './contender';
import type { Exactness, RunFigures } from './figures';
import type { RunCost } from './cost';
import type { ContenderName, WorkloadName } from './params';
import type { WorkloadPlan, WriteReport } from './workload';

export type ProcessFigures = Readonly<{
  name: string;
  /** contender: its own process (CPU over its life, peak RSS = VmHWM); stack: CPU delta over the run, VmHWM over the stack's life. */
  kind: 'contender' | 'stack';
  pid: number;
  cpu_seconds: number | null;
  peak_rss_mb: number | null;
  rss_mb: number | null;
}>;

export type RunResult = Readonly<{
  workload: WorkloadName;
  contender: ContenderName;
  /** Which round of RUNS (1-based): each round runs every contender once, the order alternating; 0 the warm-up. */
  round: number;
  database: string;
  ok: boolean;
  error: string | null;
  due_from: string | null;
  due_until: string | null;
  rows_written_seconds_before_t: number | null;
  transitions_expected: number | null;
  transitions: number | null;
  transitions_per_second: number | null;
  delay_ms: DelaySummary | null;
  first_transition_s: number | null;
  last_transition_s: number | null;
  events: number | null;
  events_per_second: number | null;
  last_event_s: number | null;
  rows_examined: number | null;
  /** The same by Handler_read_* counter: _key lookups, _next/_prev index walks, _rnd_next table scans. */
  rows_examined_by_counter: Readonly<Record<string, number>> | null;
  rows_examined_per_transition: number | null;
  /** Bytes written to the binary log over the same span as rows_examined, per transition (what CDC reads). */
  binlog_bytes_per_transition: number | null;
  processes: readonly ProcessFigures[];
  /** CPU per transition from T to the last transition and from there to the last event (cost.ts). */
  cost: RunCost | null;
  exactness: Exactness | null;
  /** The machine's 1-minute load average as the run ended: how busy it was besides the run. */
  load_average_1m: number;
  /**
   * isolation: the application's foreground latencies (lib/foreground.ts), by phase: alone
   * (before the contender started), before T, drain (T → the last transition), after.
   */
  foreground: readonly PhaseReport[] | null;
  /** isolation with the stack's replica: its lag and the stale rows a reader of it saw (lib/replica-watch.ts). */
  replica: ReplicaReport | null;
  /** The stream's pacers during the run: seconds per state and per limiting signal (contenders/pacing-watch.ts). */
  pacing: PacingReport | null;
  notes: readonly string[];
}>;

export function resultOf(r: {
  workload: WorkloadName;
  contender: ContenderName;
  round: number;
  database: string;
  plan: WorkloadPlan | undefined;
  written: WriteReport | undefined;
  figures: RunFigures | null;
  events: EventsSeen | null;
  reads: Record<string, number> | null;
  binlogBytes: number | null;
  processes: ProcessFigures[];
  notes: string[];
  error: string | null;
  cost?: RunCost;
  foreground?: readonly PhaseReport[] | null;
  replica?: ReplicaReport | null;
  pacing?: PacingReport | null;
}): RunResult {
  const { plan, figures } = r;
  const since = (ms: number | null | undefined, ref: number | undefined) =>
    ms === null || ms === undefined || ref === undefined ? null : round3((ms - ref) / 1000);
  const perSecond = (count: number, untilMs: number | null) =>
    plan === undefined || untilMs === null ? null : Math.round(count / Math.max((untilMs - plan.startRefMs) / 1000, 0.001));
  const transitions = figures?.transitions ?? null;
  const lastEventAt = r.events?.lastTimestampMs ?? null;
  const rowsExamined = r.reads === null ? null : Object.values(r.reads).reduce((a, b) => a + b, 0);
  return {
    workload: r.workload,
    contender: r.contender,
    round: r.round,
    database: r.database,
    ok: r.error === null && figures?.exactness.ok === true,
    error: r.error,
    due_from: plan ? new Date(plan.startRefMs).toISOString() : null,
    due_until: plan ? new Date(plan.endRefMs).toISOString() : null,
    rows_written_seconds_before_t: plan && r.written && plan.name !== 'steady' ? round3((plan.startRefMs - r.written.doneAtMs) / 1000) : null,
    transitions_expected: plan ? plan.expected.coupon + plan.expected.order : null,
    transitions,
    transitions_per_second: transitions === null ? null : perSecond(transitions, figures!.lastTransitionAtMs),
    delay_ms: figures?.delayMs
      ? {
          min: round3(figures.delayMs.min),
          p50: round3(figures.delayMs.p50),
          p95: round3(figures.delayMs.p95),
          p99: round3(figures.delayMs.p99),
          max: round3(figures.delayMs.max),
        }
      : null,
    first_transition_s: since(figures?.firstTransitionAtMs, plan?.startRefMs),
    last_transition_s: since(figures?.lastTransitionAtMs, plan?.endRefMs),
    events: r.events?.count ?? null,
    events_per_second: r.events ? perSecond(r.events.count, lastEventAt) : null,
    last_event_s: since(lastEventAt, plan?.endRefMs),
    rows_examined: rowsExamined,
    rows_examined_by_counter: r.reads,
    rows_examined_per_transition: rowsExamined === null || !transitions ? null : round3(rowsExamined / transitions),
    binlog_bytes_per_transition: r.binlogBytes === null || !transitions ? null : Math.round(r.binlogBytes / transitions),
    processes: r.processes,
    cost: r.cost ?? null,
    exactness: figures?.exactness ?? null,
    load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
    foreground: r.foreground ?? null,
    replica: r.replica ?? null,
    pacing: r.pacing ?? null,
    notes: r.notes,
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
