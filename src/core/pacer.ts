/**
 * The pacer of one database: how many rows a second the expirer may send it, from the
 * database's own health and bounded below by the entities' lateness budgets (issue 45).
 *
 * Health is AIMD, as TCP and Vitess's transaction throttler do it: while any signal is over its
 * threshold the rate is cut by `decrease` each adjustment (the first cut starts from the rows a
 * second the database was actually taking); while none is, it climbs back by a twentieth of that
 * starting rate each adjustment, and once it is back there the database is unpaced again. A
 * database that never shows a signal is never paced: an idle drain runs as fast as it did.
 *
 * The budget is the floor, and the floor wins (I-budget): the rate is at least what the due rows
 * waiting need to be done by the oldest one's due time plus `budgetHeadroom` of its budget, and
 * once that moment is within one adjustment, unlimited. So a due row is never held past its
 * budget by pacing; when the budget and not health sets the rate, the state says so.
 *
 * Pure: no I/O, no timers. The caller feeds it batch latencies (observeBatch), server signals
 * (observeSignals) and, about once a second, the backlog (adjust); time is the injected clock.
 * Pacing never reorders nor fires early: it only says how many rows may go, the sink picks which
 * (earliest due first, never before due).
 */
import type { Clock } from './clock';

export const PACER_SIGNALS = ['commit_latency', 'threads_running', 'history_list', 'replica_lag'] as const;
export type PacerSignal = (typeof PACER_SIGNALS)[number];
export const PACER_STATES = ['healthy', 'backing-off', 'budget-bound'] as const;
export type PacerState = (typeof PACER_STATES)[number];

/** Thresholds (configuration, docs/operations.md "Pacing") and the control law's constants. */
export type PacerSettings = Readonly<{
  /** Threads_running at or above this is overload. */
  threadsRunning: number;
  /** InnoDB history list length (undo logs not yet purged) at or above this is purge lag. */
  historyListLength: number;
  /** A replica's lag (heartbeat, ms) at or above this is too far behind. */
  replicaLagMs: number;
  /** A batch's commit latency at or above max(factor × its quiet baseline, baseline + floorMs) is slow. */
  commitLatencyFactor: number;
  commitLatencyFloorMs: number;
  /** The rate is never cut below this (rows/s); the budget lifts it further when needed. */
  minRate: number;
  /** The multiplicative cut per adjustment while a signal is over (0 < decrease < 1). */
  decrease: number;
  /** The share of a budget the pacer plans to use; the rest is slack for batches in flight and a late adjustment. */
  budgetHeadroom: number;
}>;

export const DEFAULT_PACER_SETTINGS: PacerSettings = Object.freeze({
  // pt-online-schema-change's --max-load default (Threads_running=25). The expirer itself adds at
  // most its concurrency (4) and Debezium one; an idle server runs 1–3. 25 is well above what the
  // drain raises alone, and a server whose cores are all busy queues long before it.
  threadsRunning: 25,
  // Purge normally keeps this in the hundreds; the drain adds one undo log per batch (a 200,000-row
  // minute: ~100). 100,000 unpurged transactions means reads walk long version chains: far above
  // what a drain makes alone, and the level monitoring tools commonly warn at.
  historyListLength: 100_000,
  // Reads from replicas should see expiries within a second (issue 45's target), and a heartbeat
  // measures below a second; gh-ost's --max-lag-millis default is 1,500.
  replicaLagMs: 1_000,
  // A batch 4× slower than when the database was quiet and at least 250 ms slower: a drain's own
  // batches vary by less than 2× among themselves (they compete with each other for the cores),
  // so the drain alone does not trip it; a server the application also loads does.
  commitLatencyFactor: 4,
  commitLatencyFloorMs: 250,
  // Enough to keep a trickle moving while the database is under load; the budget does the rest.
  minRate: 50,
  // CUBIC's cut: firm enough that a second of overload halves the rate within two adjustments.
  decrease: 0.7,
  // Plan to finish by 3/4 of the budget: 30 s of a 120 s budget left for what a plan cannot see.
  budgetHeadroom: 0.75,
});

/** The server's signals as last read; a signal the server does not give (or could not be read) is absent. */
export type ServerSignals = Readonly<{ threadsRunning?: number; historyListLength?: number; replicaLagMs?: number }>;

/** The due rows waiting for the database: how many, the oldest one's due time and its entity's budget. */
export type Backlog = Readonly<{ dueRows: number; oldestDueAtMs?: number; budgetMs?: number }>;

export type PacerView = Readonly<{
  /** Rows a second the database may take now: Infinity when unpaced. */
  rate: number;
  /** What its health allows (Infinity: no signal held it back since it last recovered). */
  healthRate: number;
  /** What the budget needs (0 without due rows; Infinity once the oldest is about to run out). */
  budgetRate: number;
  state: PacerState;
  /** The signal that holds health back (over now, or the last one over while it recovers). */
  limitedBy?: PacerSignal;
  /** The oldest due row's lateness as a share of its budget (0 without due rows). */
  budgetUsed: number;
}>;

/** Batches are compared with batches of about their size: a size class per power of two. */
type LatencyClass = { baseline: number; recent: number; at: number; samples: number };

/**
 * A baseline moves half way to a faster batch (one lucky batch is not the norm) and towards a
 * slower one by this fraction per batch (load does not become the norm): a low percentile, roughly.
 */
const BASELINE_FALL = 0.5;
const BASELINE_RISE = 0.002;
/** A class's latency is a signal once it has seen this many batches: its baseline is then more than one sample. */
const MIN_SAMPLES = 5;
const RECENT_WEIGHT = 0.3;
/** From the cut's starting rate back to it in 20 adjustments (about 20 s). */
const RECOVERY_STEPS = 20;

export class Pacer {
  private healthRate = Number.POSITIVE_INFINITY;
  /** The rows a second the database took when the first cut started: recovery climbs back to it. */
  private ceiling = 0;
  private limitedBy: PacerSignal | undefined;
  private signals: ServerSignals = {};
  private readonly latency = new Map<number, LatencyClass>();
  private rows = 0;
  private lastAdjustAt: number;
  private view: PacerView;

  constructor(
    private readonly settings: PacerSettings,
    private readonly clock: Clock,
  ) {
    this.lastAdjustAt = clock.now();
    this.view = { rate: Number.POSITIVE_INFINITY, healthRate: Number.POSITIVE_INFINITY, budgetRate: 0, state: 'healthy', budgetUsed: 0 };
  }

  get current(): PacerView {
    return this.view;
  }

  /** A batch of `rows` took `latencyMs` from its start to its commit. */
  observeBatch(rows: number, latencyMs: number): void {
    if (rows < 1 || !(latencyMs >= 0)) return;
    this.rows += rows;
    const key = Math.floor(Math.log2(rows));
    const c = this.latency.get(key);
    const now = this.clock.now();
    if (c === undefined) {
      this.latency.set(key, { baseline: latencyMs, recent: latencyMs, at: now, samples: 1 });
      return;
    }
    c.baseline += (latencyMs - c.baseline) * (latencyMs < c.baseline ? BASELINE_FALL : BASELINE_RISE);
    c.samples += 1;
    c.recent = c.recent + (latencyMs - c.recent) * RECENT_WEIGHT;
    c.at = now;
  }

  observeSignals(signals: ServerSignals): void {
    this.signals = signals;
  }

  /** Each signal's value over its threshold (≥ 1: over); latency only from classes with a batch since the last adjustment. */
  pressure(): Partial<Record<PacerSignal, number>> {
    const s = this.settings;
    const out: Partial<Record<PacerSignal, number>> = {};
    const { threadsRunning, historyListLength, replicaLagMs } = this.signals;
    if (threadsRunning !== undefined) out.threads_running = threadsRunning / s.threadsRunning;
    if (historyListLength !== undefined) out.history_list = historyListLength / s.historyListLength;
    if (replicaLagMs !== undefined) out.replica_lag = replicaLagMs / s.replicaLagMs;
    for (const c of this.latency.values()) {
      if (c.at < this.lastAdjustAt || c.samples < MIN_SAMPLES) continue;
      const limit = Math.max(c.baseline * s.commitLatencyFactor, c.baseline + s.commitLatencyFloorMs);
      out.commit_latency = Math.max(out.commit_latency ?? 0, c.recent / limit);
    }
    return out;
  }

  /** About once a second: the health rate follows the signals, and the budget of `backlog` bounds it below. */
  adjust(backlog: Backlog): PacerView {
    const s = this.settings;
    const now = this.clock.now();
    const elapsedS = Math.max(now - this.lastAdjustAt, 1) / 1_000;
    const taken = this.rows / elapsedS;
    let worst: PacerSignal | undefined;
    let worstRatio = 1;
    for (const [signal, ratio] of Object.entries(this.pressure()) as Array<[PacerSignal, number]>) {
      if (ratio >= worstRatio) [worst, worstRatio] = [signal, ratio];
    }
    if (worst !== undefined) {
      if (this.healthRate === Number.POSITIVE_INFINITY) this.ceiling = Math.max(taken, s.minRate);
      // From what the database takes, not from a limit it never reached (a budget-bound rate above it aside).
      const from = Math.min(this.healthRate, Math.max(taken, s.minRate));
      this.healthRate = Math.max(s.minRate, from * s.decrease);
      this.limitedBy = worst;
    } else if (this.healthRate !== Number.POSITIVE_INFINITY) {
      this.healthRate += this.ceiling / RECOVERY_STEPS;
      if (this.healthRate >= this.ceiling) {
        this.healthRate = Number.POSITIVE_INFINITY;
        this.limitedBy = undefined;
      }
    }
    this.rows = 0;
    const budgetRate = this.budgetRate(backlog, now, Math.max(now - this.lastAdjustAt, 1_000));
    this.lastAdjustAt = now;
    const rate = Math.max(this.healthRate, budgetRate);
    const state: PacerState = this.healthRate === Number.POSITIVE_INFINITY ? 'healthy' : budgetRate > this.healthRate ? 'budget-bound' : 'backing-off';
    const used =
      backlog.dueRows > 0 && backlog.oldestDueAtMs !== undefined && backlog.budgetMs ? Math.max(0, now - backlog.oldestDueAtMs) / backlog.budgetMs : 0;
    this.view = { rate, healthRate: this.healthRate, budgetRate, state, budgetUsed: used, ...(this.limitedBy !== undefined && { limitedBy: this.limitedBy }) };
    return this.view;
  }

  /**
   * The rate that has every due row waiting done by the oldest's due time plus the planned share
   * of its budget (all of them counted as if due with the oldest: it errs on the fast side). Once
   * less than one adjustment (`stepMs`) is left: unlimited, so the oldest rows go at once.
   */
  private budgetRate(backlog: Backlog, now: number, stepMs: number): number {
    if (backlog.dueRows <= 0 || backlog.oldestDueAtMs === undefined || backlog.budgetMs === undefined) return 0;
    const leftMs = backlog.oldestDueAtMs + backlog.budgetMs * this.settings.budgetHeadroom - now;
    if (leftMs <= stepMs) return Number.POSITIVE_INFINITY;
    return (backlog.dueRows * 1_000) / leftMs;
  }
}
