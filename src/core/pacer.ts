/**
 * The pacer of one database: how many rows a second the expirer may send it, from the
 * database's own health and bounded below by the entities' lateness budgets (issue 45).
 *
 * Health is TCP's congestion control. A drain on a quiet database starts at `startRate` and
 * doubles each adjustment while no signal is over (slow start: the first second of a hot minute
 * is not the database's whole capacity before a signal could be read); once the database takes
 * less than half the rate, the rate is not what holds the drain back and the database is
 * unpaced. While any signal is over its threshold the rate is cut by `decrease` each adjustment
 * (the first cut starts from the rows a second the database was actually taking); while none
 * is, it climbs by a tenth of the rate the last cut left each adjustment (AIMD, as Vitess's
 * transaction throttler does) for the rest of the drain, unpaced once it no longer binds. Quiet
 * for QUIET_MS with no signal over, the next drain starts at `startRate` again.
 *
 * The budget is the floor, and the floor wins (I-budget): the rate is at least what the due rows
 * waiting need to be done by the oldest one's due time plus `budgetHeadroom` of its budget, and
 * once that moment is within one adjustment, unlimited. So a due row is never held past its
 * budget by pacing; when the budget and not health sets the rate, the state says so.
 *
 * Pure: no I/O, no timers. The caller feeds it batch latencies (observeBatch), the latency probe's
 * answers (observeProbe), the moments it sends work (working), server signals (observeSignals)
 * and, about once a second, the backlog (adjust); time is the injected clock.
 * Pacing never reorders nor fires early: it only says how many rows may go, the sink picks which
 * (earliest due first, never before due).
 */
import type { Clock } from './clock';

export const PACER_SIGNALS = ['probe_latency', 'commit_latency', 'threads_running', 'history_list', 'replica_lag'] as const;
export type PacerSignal = (typeof PACER_SIGNALS)[number];
export const PACER_STATES = ['healthy', 'starting', 'backing-off', 'budget-bound'] as const;
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
  /**
   * The tail (90th percentile) of a second's probes (db/latency-probe.ts: `SELECT 1`, ten a second)
   * at or above max(factor × its quiet baseline, baseline + floorMs) is a database slow to answer.
   */
  probeLatencyFactor: number;
  probeLatencyFloorMs: number;
  /** The rate is never cut below this (rows/s); the budget lifts it further when needed. */
  minRate: number;
  /** A drain on a quiet database starts at this rate (rows/s) and doubles each second while no signal is over. */
  startRate: number;
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
  // A second in which the second-slowest of ten trivial statements took 4× its quiet level and at
  // least a millisecond more: a tenth of the server's answers queue behind something, and the
  // application's queries with them. A quiet server's tail stays near its baseline (on the stack:
  // 0.5–0.8 ms, a second over 1.2 ms about once in thirty).
  probeLatencyFactor: 4,
  probeLatencyFloorMs: 1,
  // Enough to keep a trickle moving while the database is under load; the budget does the rest.
  minRate: 50,
  // A drain starts gently, as TCP's slow start does: a hot minute's first second is not the
  // database's whole capacity before any signal could be read. Doubling reaches 16,000 rows/s in
  // four seconds; an idle drain of 200,000 rows pays about 2–3 s for it (docs/capacity.md).
  startRate: 1_000,
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
  /** The latency probe's tail in the last adjustment's window and its quiet baseline (ms); absent before enough probes. */
  probeTailMs?: number;
  probeBaselineMs?: number;
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
/** After a cut the rate climbs by this share of the rate the cut left, each adjustment: back to where it was cut in about 4 s. */
const RECOVERY_SHARE = 0.1;
/** A database that took less than this share of its rate, with due rows waiting, is not held back by it. */
const NOT_BINDING = 0.5;
/** The probes of a database the expirer has sent nothing for this long are quiet: its baseline may rise to them. */
const QUIET_MS = 5_000;
/** Towards a slower quiet window by this fraction per adjustment (a new quiet level in about 10 s). */
const PROBE_QUIET_RISE = 0.1;
/** A window's tail needs a few probes. */
const MIN_PROBES = 5;

export class Pacer {
  private healthRate: number;
  /**
   * armed: idle, a drain will start at the start rate; starting: the rate doubles each second
   * while no signal is over; unpaced: the rate no longer held the drain back; recovering: after
   * a cut, up by a step a second, for the rest of the drain.
   */
  private phase: 'armed' | 'starting' | 'unpaced' | 'recovering' = 'armed';
  private wasBusy = false;
  private quietSince: number | undefined;
  /** The climb per adjustment after a cut: a share of the rate the last cut left. */
  private step = 0;
  private limitedBy: PacerSignal | undefined;
  private signals: ServerSignals = {};
  private readonly latency = new Map<number, LatencyClass>();
  private rows = 0;
  private probes: number[] = [];
  private probeBaseline: number | undefined;
  private lastWorkAt = Number.NEGATIVE_INFINITY;
  private lastAdjustAt: number;
  private view: PacerView;

  constructor(
    private readonly settings: PacerSettings,
    private readonly clock: Clock,
  ) {
    this.lastAdjustAt = clock.now();
    this.healthRate = Math.max(settings.startRate, settings.minRate);
    this.view = { rate: this.healthRate, healthRate: this.healthRate, budgetRate: 0, state: 'healthy', budgetUsed: 0 };
  }

  get current(): PacerView {
    return this.view;
  }

  /** The expirer sends the database work now (a batch starts): its probes are not quiet for a while. */
  working(): void {
    this.lastWorkAt = this.clock.now();
  }

  /** A probe's answer time (db/latency-probe.ts); the adjustment reads the window's tail. */
  observeProbe(latencyMs: number): void {
    if (latencyMs >= 0) this.probes.push(latencyMs);
  }

  /** A batch of `rows` took `latencyMs` from its start to its commit. */
  observeBatch(rows: number, latencyMs: number): void {
    if (rows < 1 || !(latencyMs >= 0)) return;
    this.lastWorkAt = this.clock.now();
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
  pressure(tail = this.probeTail()): Partial<Record<PacerSignal, number>> {
    const s = this.settings;
    const out: Partial<Record<PacerSignal, number>> = {};
    const { threadsRunning, historyListLength, replicaLagMs } = this.signals;
    if (threadsRunning !== undefined) out.threads_running = threadsRunning / s.threadsRunning;
    if (historyListLength !== undefined) out.history_list = historyListLength / s.historyListLength;
    if (replicaLagMs !== undefined) out.replica_lag = replicaLagMs / s.replicaLagMs;
    if (tail !== undefined && this.probeBaseline !== undefined) {
      const limit = Math.max(this.probeBaseline * s.probeLatencyFactor, this.probeBaseline + s.probeLatencyFloorMs);
      out.probe_latency = tail / limit;
    }
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
    const busy = backlog.dueRows > 0;
    const probeTailMs = this.probeTail();
    let worst: PacerSignal | undefined;
    let worstRatio = 1;
    for (const [signal, ratio] of Object.entries(this.pressure(probeTailMs)) as Array<[PacerSignal, number]>) {
      if (ratio >= worstRatio) [worst, worstRatio] = [signal, ratio];
    }
    if (worst !== undefined) {
      // From what the database takes, not from a limit it never reached (a budget-bound rate above it aside).
      const from = Math.min(this.healthRate, Math.max(taken, s.minRate));
      this.healthRate = Math.max(s.minRate, from * s.decrease);
      this.step = Math.max(1, this.healthRate * RECOVERY_SHARE);
      this.limitedBy = worst;
      this.phase = 'recovering';
    } else if (this.phase === 'recovering') {
      // Additive for the rest of the drain (TCP's congestion avoidance: doubling again overshoots
      // into the next cut, and a step sized by the first cut's rate climbs too fast from a low
      // one); unpaced once the rate no longer binds.
      if (busy && this.wasBusy && taken < this.healthRate * NOT_BINDING)
        [this.healthRate, this.phase, this.limitedBy] = [Number.POSITIVE_INFINITY, 'unpaced', undefined];
      else this.healthRate += this.step;
    } else if (this.phase !== 'unpaced' && busy) {
      // A second with due rows waiting in full behind it: the rate doubles, unless the database
      // took well under it (the pacer is not what holds the drain back): then unpaced.
      if (this.phase === 'starting' && this.wasBusy) {
        if (taken < this.healthRate * NOT_BINDING) [this.healthRate, this.phase] = [Number.POSITIVE_INFINITY, 'unpaced'];
        else this.healthRate *= 2;
      }
      if (this.phase === 'armed') this.phase = 'starting';
    }
    // Quiet for a while with no signal: the next drain starts at the start rate again.
    if (busy || worst !== undefined) this.quietSince = undefined;
    else if (this.quietSince === undefined) this.quietSince = now;
    else if (now - this.quietSince >= QUIET_MS && this.phase !== 'armed') {
      [this.healthRate, this.phase, this.limitedBy] = [Math.max(s.startRate, s.minRate), 'armed', undefined];
    }
    this.wasBusy = busy;
    this.learnProbeBaseline(now, probeTailMs);
    this.rows = 0;
    this.probes = [];
    const budgetRate = this.budgetRate(backlog, now, Math.max(now - this.lastAdjustAt, 1_000));
    this.lastAdjustAt = now;
    const rate = Math.max(this.healthRate, budgetRate);
    const state: PacerState =
      this.phase === 'unpaced' || this.phase === 'armed'
        ? 'healthy'
        : budgetRate > this.healthRate
          ? 'budget-bound'
          : this.phase === 'starting'
            ? 'starting'
            : 'backing-off';
    const used =
      backlog.dueRows > 0 && backlog.oldestDueAtMs !== undefined && backlog.budgetMs ? Math.max(0, now - backlog.oldestDueAtMs) / backlog.budgetMs : 0;
    this.view = {
      rate,
      healthRate: this.healthRate,
      budgetRate,
      state,
      budgetUsed: used,
      ...(this.limitedBy !== undefined && { limitedBy: this.limitedBy }),
      ...(probeTailMs !== undefined && { probeTailMs }),
      ...(this.probeBaseline !== undefined && { probeBaselineMs: this.probeBaseline }),
    };
    return this.view;
  }

  /**
   * The probes' tail since the last adjustment: the 90th percentile (of ten a second, the second
   * slowest: one stray answer is not a signal, two are). The application's P99 is what the
   * pacer protects, and a median stays quick while a tenth of the answers wait behind a batch.
   */
  private probeTail(): number | undefined {
    if (this.probes.length < MIN_PROBES) return undefined;
    const sorted = [...this.probes].sort((a, b) => a - b);
    return sorted[Math.ceil(sorted.length * 0.9) - 1];
  }

  /**
   * The probes' quiet baseline, a window's tail at a time: it follows a quicker window half way
   * at once, and a slower one only while the expirer has left the database alone for QUIET_MS
   * (its own load, and what it leaves behind in the binlog readers, never becomes the norm; the
   * application's own busy hour does).
   */
  private learnProbeBaseline(now: number, tail: number | undefined): void {
    if (tail === undefined) return;
    if (this.probeBaseline === undefined) this.probeBaseline = tail;
    else if (tail < this.probeBaseline) this.probeBaseline += (tail - this.probeBaseline) * BASELINE_FALL;
    else if (now - this.lastWorkAt >= QUIET_MS) this.probeBaseline += (tail - this.probeBaseline) * PROBE_QUIET_RISE;
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
