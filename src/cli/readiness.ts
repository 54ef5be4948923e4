/**
 * What /readyz answers for `timebucket run`. Ready: every consumer joined its group, the process
 * is healthy and not stopping, and every database it serves answers with its tables checked.
 * The body says what is not: each database (answering or not, since when, why), the switches,
 * a start-up still waiting for what it needs; and each database's pacer. A paused process is ready (ops/http-server.ts).
 *
 * A transition held because its first pass was refused (db/first-pass-holds.ts) leaves the process
 * ready, as a paused one: it serves every other entity, and a pod taken out of service or a
 * rollout stalled on it would not lift the hold (a restart with the flag or the mapping fixed
 * does). `firstPassHeld` names each hold, its table and why; the metric and the alert page on it.
 */
import type { SwitchSummary } from '../control/switch-state';
import type { DatabaseState } from '../db/database-watch';
import type { HeldTransition } from '../db/first-pass-holds';
import type { PacerView } from '../core/pacer';

/** The parts of a running process that readiness reads (main.ts Running). */
export type ReadinessSource = Readonly<{
  health: () => Readonly<{ ok: boolean }>;
  control: () => SwitchSummary;
  databases: () => Readonly<Record<string, DatabaseState>>;
  /** Absent: none held (a source that cannot hold any). */
  firstPassHeld?: () => readonly HeldTransition[];
  /** The expirer's pacer of each database; absent or empty: none (no expirer, TB_PACING=off). */
  pacing?: () => ReadonlyMap<string, PacerView>;
}>;

/** `starting`: start-up is retrying: its failed attempts so far and the last one's error. */
export type ProcessPhase = Readonly<{ joined: boolean; stopping: boolean; starting?: Readonly<{ failedAttempts: number; error: string }> }>;

export type Readiness = Readonly<{ ready: boolean; details: Record<string, unknown> }>;

export function processReadiness(running: ReadinessSource | undefined, phase: ProcessPhase): Readiness {
  if (running === undefined) return { ready: false, details: phase.starting === undefined ? {} : { starting: phase.starting } };
  const databases = running.databases();
  const serving = Object.values(databases).every((d) => d.answering && d.checked);
  return {
    ready: phase.joined && !phase.stopping && running.health().ok && serving,
    details: {
      control: running.control(),
      databases: Object.fromEntries(
        Object.entries(databases).map(([name, d]) => [
          name,
          { answering: d.answering, checked: d.checked, since: new Date(d.sinceMs).toISOString(), ...(d.error !== undefined && { error: d.error }) },
        ]),
      ),
      firstPassHeld: running.firstPassHeld?.() ?? [],
      pacing: Object.fromEntries([...(running.pacing?.() ?? [])].map(([database, v]) => [database, pacingDetail(v)])),
    },
  };
}

/**
 * A pacer as /readyz shows it: its state, the signal holding it back, the rate (null: unpaced;
 * JSON has no Infinity) and the share of the budget the oldest due row has used. Pacing never
 * makes a process unready: budget-bound, it is doing what the budget asks.
 */
function pacingDetail(v: PacerView): Record<string, unknown> {
  const rate = (r: number) => (Number.isFinite(r) ? Math.round(r) : null);
  return { state: v.state, limitedBy: v.limitedBy ?? null, rowsPerSecond: rate(v.rate), budgetUsed: Math.round(v.budgetUsed * 1_000) / 1_000 };
}
