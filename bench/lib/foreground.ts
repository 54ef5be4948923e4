/**
 * The application's own traffic, as a bench's foreground: an OPEN-loop load on the same tables
 * the expiry works on, so what a hot minute does to checkout is measured the way its users feel it.
 *
 * Open loop: request i is scheduled at start + i / rate and launched then, whether or not the
 * earlier ones have finished, and its latency counts from that scheduled start, not from when it
 * got a connection or was sent. A stall therefore shows as the latency of every request
 * scheduled during it (no coordinated omission: a closed loop would send fewer requests while
 * the database stalls and report the few that went through). Latencies go into HDR histograms
 * (hdr-histogram-js, microseconds, 3 significant digits), one per phase the caller marks
 * (`phase('drain')`), per operation and in all.
 *
 * The mix, a wallet and checkout path (seed 000's "acquisition, redemption, or query paths"):
 *   60 %  a user's wallet: their ACTIVE coupons by idx_coupons_user (user_id, status, expire_time)
 *   15 %  redeem a coupon by id, guarded ACTIVE → USED (the seeds' CAS)
 *   10 %  issue a coupon (due a day later: never part of a run's expiry)
 *   10 %  create an order (UNPAID, due an hour later)
 *    5 %  pay one of them, guarded UNPAID → PAID
 * Its users are ids from `userBase` on, never a workload's tag, so a run's rows are told apart
 * by user_id as before. `seed()` gives each user a wallet before the first measured phase.
 *
 * Memory is bounded: at most `maxInFlight` requests outstanding; one scheduled beyond that is
 * counted as shed (an error), not queued.
 */
import * as hdr from 'hdr-histogram-js';
import type { Db } from '../../src/db/knex';

export const ForegroundOps = ['wallet', 'redeem', 'issue', 'order', 'pay'] as const;
export type ForegroundOp = (typeof ForegroundOps)[number];
const MIX: ReadonlyArray<readonly [ForegroundOp, number]> = [
  ['wallet', 0.6],
  ['redeem', 0.15],
  ['issue', 0.1],
  ['order', 0.1],
  ['pay', 0.05],
];

export type ForegroundOptions = Readonly<{
  db: Db;
  /** Requests per second, all operations together. */
  rate: number;
  users: number;
  /** The first user id of the foreground's own users. */
  userBase: number;
  maxInFlight?: number;
  /** For the mix and the picks; tests make it exact. */
  random?: () => number;
}>;

export type LatencySummary = Readonly<{ count: number; errors: number; p50_ms: number; p99_ms: number; p999_ms: number; max_ms: number }>;
export type PhaseReport = Readonly<{ phase: string; seconds: number; all: LatencySummary; ops: Readonly<Record<ForegroundOp, LatencySummary>> }>;

type PhaseStats = {
  name: string;
  startedAtMs: number;
  endedAtMs?: number;
  all: hdr.Histogram;
  ops: Map<ForegroundOp, hdr.Histogram>;
  errors: Map<ForegroundOp, number>;
};

const histogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });

export class Foreground {
  private readonly random: () => number;
  private readonly maxInFlight: number;
  private readonly phases: PhaseStats[] = [];
  /** Coupons the foreground issued (or seeded) and has not redeemed; orders not paid. */
  private readonly activeCoupons: number[] = [];
  private readonly unpaidOrders: number[] = [];
  private inFlight = 0;
  private timer?: NodeJS.Timeout;
  private running?: { startMs: number; sent: number };
  private readonly outstanding = new Set<Promise<void>>();

  constructor(private readonly opts: ForegroundOptions) {
    this.random = opts.random ?? Math.random;
    this.maxInFlight = opts.maxInFlight ?? 2_000;
  }

  /** Gives every user a wallet of `perUser` coupons (due a day later). Before the load starts. */
  async seed(perUser: number): Promise<void> {
    const rows = [];
    for (let u = 0; u < this.opts.users; u += 1) {
      for (let i = 0; i < perUser; i += 1)
        rows.push({ user_id: this.opts.userBase + u, status: 'ACTIVE', expire_time: this.opts.db.raw('NOW(3) + INTERVAL 1 DAY') });
    }
    for (let i = 0; i < rows.length; i += 1_000) {
      const chunk = rows.slice(i, i + 1_000);
      const [first] = (await this.opts.db('coupons').insert(chunk)) as number[];
      for (let k = 0; k < chunk.length; k += 1) this.activeCoupons.push(first! + k);
    }
  }

  /** Starts the load, its measurements in phase `name`. */
  start(name: string): void {
    if (this.running) throw new Error('the foreground is already running');
    this.phase(name);
    this.running = { startMs: performance.now(), sent: 0 };
    this.tick();
  }

  /** Ends the current phase and starts measuring into a new one. */
  phase(name: string): void {
    const now = Date.now();
    const current = this.phases.at(-1);
    if (current && current.endedAtMs === undefined) current.endedAtMs = now;
    this.phases.push({ name, startedAtMs: now, all: histogram(), ops: new Map(ForegroundOps.map((o) => [o, histogram()])), errors: new Map() });
  }

  /** Stops scheduling, waits for what is outstanding, and reports each phase. */
  async stop(): Promise<PhaseReport[]> {
    if (this.timer) clearTimeout(this.timer);
    this.running = undefined;
    await Promise.allSettled([...this.outstanding]);
    const last = this.phases.at(-1);
    if (last && last.endedAtMs === undefined) last.endedAtMs = Date.now();
    return this.phases.map(reportOf);
  }

  /** Launches every request whose scheduled start has come (all of them after a late timer), then waits for the next. */
  private tick(): void {
    const run = this.running;
    if (run === undefined) return;
    const intervalMs = 1000 / this.opts.rate;
    const now = performance.now();
    while (run.startMs + run.sent * intervalMs <= now) {
      this.launch(run.startMs + run.sent * intervalMs);
      run.sent += 1;
    }
    const next = run.startMs + run.sent * intervalMs;
    this.timer = setTimeout(() => this.tick(), Math.max(0, next - performance.now()));
  }

  private launch(scheduledMs: number): void {
    const op = this.pick();
    const phase = this.phases.at(-1)!;
    if (this.inFlight >= this.maxInFlight) {
      phase.errors.set(op, (phase.errors.get(op) ?? 0) + 1);
      return;
    }
    this.inFlight += 1;
    const request = this.run(op)
      .then(
        () => {
          const micros = Math.max(1, Math.round((performance.now() - scheduledMs) * 1000));
          phase.all.recordValue(micros);
          phase.ops.get(op)!.recordValue(micros);
        },
        () => void phase.errors.set(op, (phase.errors.get(op) ?? 0) + 1),
      )
      .finally(() => {
        this.inFlight -= 1;
        this.outstanding.delete(request);
      });
    this.outstanding.add(request);
  }

  private pick(): ForegroundOp {
    let r = this.random();
    for (const [op, share] of MIX) {
      if (r < share) return op;
      r -= share;
    }
    return 'wallet';
  }

  private user(): number {
    return this.opts.userBase + Math.floor(this.random() * this.opts.users);
  }

  /** One request. A redeem or pay with nothing left to take reads a wallet instead. */
  private async run(op: ForegroundOp): Promise<void> {
    const db = this.opts.db;
    if (op === 'redeem' && this.activeCoupons.length > 0) {
      const id = this.take(this.activeCoupons);
      await db('coupons')
        .where({ id, status: 'ACTIVE' })
        .update({ status: 'USED', version: db.raw('version + 1') });
    } else if (op === 'issue') {
      const [id] = (await db('coupons').insert({ user_id: this.user(), status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 1 DAY') })) as number[];
      this.activeCoupons.push(id!);
    } else if (op === 'order') {
      const [id] = (await db('orders').insert({ user_id: this.user(), status: 'UNPAID', expire_time: db.raw('NOW(3) + INTERVAL 1 HOUR') })) as number[];
      this.unpaidOrders.push(id!);
    } else if (op === 'pay' && this.unpaidOrders.length > 0) {
      const id = this.take(this.unpaidOrders);
      await db('orders')
        .where({ id, status: 'UNPAID' })
        .update({ status: 'PAID', version: db.raw('version + 1') });
    } else {
      await db('coupons').where({ user_id: this.user(), status: 'ACTIVE' }).orderBy('expire_time').limit(50).select('id', 'expire_time');
    }
  }

  /** A random element, removed (swap with the last). */
  private take(list: number[]): number {
    const i = Math.floor(this.random() * list.length);
    const value = list[i]!;
    list[i] = list[list.length - 1]!;
    list.pop();
    return value;
  }
}

function summaryOf(h: hdr.Histogram, errors: number): LatencySummary {
  const ms = (micros: number) => Math.round(micros) / 1000;
  const count = h.totalCount;
  return {
    count,
    errors,
    p50_ms: count === 0 ? 0 : ms(h.getValueAtPercentile(50)),
    p99_ms: count === 0 ? 0 : ms(h.getValueAtPercentile(99)),
    p999_ms: count === 0 ? 0 : ms(h.getValueAtPercentile(99.9)),
    max_ms: count === 0 ? 0 : ms(h.maxValue),
  };
}

function reportOf(p: PhaseStats): PhaseReport {
  const errors = [...p.errors.values()].reduce((a, b) => a + b, 0);
  const ops = Object.fromEntries(ForegroundOps.map((o) => [o, summaryOf(p.ops.get(o)!, p.errors.get(o) ?? 0)])) as Record<ForegroundOp, LatencySummary>;
  return { phase: p.name, seconds: Math.round(((p.endedAtMs ?? Date.now()) - p.startedAtMs) / 100) / 10, all: summaryOf(p.all, errors), ops };
}
