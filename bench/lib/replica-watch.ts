/**
 * What a reader of the replica sees while a run expires rows on the primary (`isolation`, when
 * the stack runs its replica: TB_STACK_REPLICA=1):
 *
 *   lag    the replica's lag, sub-second, from a heartbeat row the bench writes on the primary
 *          and reads back on the replica (core/replica-lag.ts, as the service measures it: only
 *          this process's clock enters it); its maximum and P99 over the run.
 *   stale  rows a replica reader saw ACTIVE after they were due and already expired on the
 *          primary: every `intervalMs` a wallet read of the run's own rows on the replica, then
 *          the primary asked which of the ids it returned had been expired before that read was
 *          sent (expired_at, the primary's NOW(3), against the read's start on this host's clock:
 *          the stack's servers and the bench share one machine and its clock).
 *
 * One beat and one sample in flight at a time; both stop with stop().
 */
import type { Db } from '../../src/db/knex';
import { HeartbeatLog } from '../../src/core/replica-lag';
import { readHeartbeat } from '../../src/db/sql/read-heartbeat';
import { writeHeartbeat } from '../../src/db/sql/write-heartbeat';

export type ReplicaReport = Readonly<{
  lag_max_ms: number | null;
  lag_p99_ms: number | null;
  lag_samples: number;
  replica_reads: number;
  /** ACTIVE rows the replica returned that the primary had expired before the read was sent. */
  stale_rows: number;
  errors: number;
}>;

export type ReplicaWatchOptions = Readonly<{ primary: Db; replica: Db; tag: number; intervalMs?: number; writer?: string }>;

export class ReplicaWatch {
  private readonly log = new HeartbeatLog();
  private readonly lags: number[] = [];
  private seq = 0;
  private reads = 0;
  private stale = 0;
  private errors = 0;
  private stopped = false;
  private closed = false;
  private loop?: Promise<void>;

  constructor(private readonly opts: ReplicaWatchOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** Ends the loop and closes the replica's pool; idempotent. */
  async close(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.loop = undefined;
    if (!this.closed) {
      this.closed = true;
      await this.opts.replica.destroy();
    }
  }

  async stop(): Promise<ReplicaReport> {
    await this.close();
    const sorted = [...this.lags].sort((a, b) => a - b);
    const at = (p: number) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
    return {
      lag_max_ms: sorted.length === 0 ? null : sorted[sorted.length - 1]!,
      lag_p99_ms: at(99),
      lag_samples: sorted.length,
      replica_reads: this.reads,
      stale_rows: this.stale,
      errors: this.errors,
    };
  }

  private async run(): Promise<void> {
    const interval = this.opts.intervalMs ?? 100;
    while (!this.stopped) {
      const began = Date.now();
      await Promise.all([this.beat(), this.sample()]).catch(() => (this.errors += 1));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, interval - (Date.now() - began))));
    }
  }

  /**
   * The replica's row read (a lag sample), then the next beat written on the primary: each read
   * comes an interval after the last beat, so a replica a whole interval behind shows it (the
   * resolution is one interval, as pt-heartbeat's).
   */
  private async beat(): Promise<void> {
    const writer = this.opts.writer ?? 'bench';
    const readAt = Date.now();
    const lag = this.log.lagMs(await readHeartbeat(this.opts.replica, writer), readAt);
    if (lag !== undefined) this.lags.push(lag);
    this.seq += 1;
    await writeHeartbeat(this.opts.primary, writer, this.seq);
    this.log.committed(this.seq, Date.now());
  }

  /** A wallet read of the run's rows on the replica; those the primary had expired before it, counted. */
  private async sample(): Promise<void> {
    const sentAt = new Date();
    const rows = (await this.opts
      .replica('coupons')
      .where({ user_id: this.opts.tag, status: 'ACTIVE' })
      .orderBy('expire_time')
      .limit(200)
      .select('id')) as Array<{
      id: number | string;
    }>;
    this.reads += 1;
    if (rows.length === 0) return;
    const [row] = (await this.opts
      .primary('coupons')
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .where('status', 'EXPIRED')
      .where('expired_at', '<', sentAt)
      .count({ n: '*' })) as Array<{ n: number | string }>;
    this.stale += Number(row!.n);
  }
}
