/**
 * The expirer's pacing, per database (issue 45): a Pacer (core/pacer.ts) and a token bucket for
 * each database the catalogue names. About once a second each database's signals are read
 * (db/pacer-signals.ts, one read in flight per database, a read slower than the interval counts
 * as no signal), its pacer adjusts to them and to the sink's backlog on it, and the bucket takes
 * the pacer's rate. The sink (hold/expirer-sink.ts) takes a database's rows only as fast as its
 * bucket allows, beside the operator's throttle per entity: the lower of the two wins.
 *
 * Unpaced (rate Infinity, the healthy state) there is no bucket at all: an idle drain runs as it
 * did before pacing. Pacing says how many rows may go, never which: the sink keeps taking the
 * earliest due first, and never a row before its due time.
 */
import type { Clock } from '../core/clock';
import { Pacer, type Backlog, type PacerSettings, type PacerView, type ServerSignals } from '../core/pacer';
import { TokenBucket } from '../control/token-bucket';
import type { Logger } from '../ops/logger';
import type { DatabasePace } from './expirer-lanes';

/** What the sink tells the pacing, and asks of it. */
export type DatabasePacing = DatabasePace &
  Readonly<{
    /** Spends `n` of the database's allowance (rows sent to a batch). */
    consume(database: string, n: number): void;
    /** A probe of `database` (db/latency-probe.ts) was answered in `latencyMs`. */
    observeProbe(database: string, latencyMs: number): void;
    /** A batch of `rows` on `database` took `latencyMs` until it committed. */
    observeBatch(database: string, rows: number, latencyMs: number): void;
    /** The sink's side: its backlog per database, and a wake-up when a rate changed. Returns the stop. */
    attach(source: Readonly<{ backlogOf(database: string, now: number): Backlog; wake(): void }>): () => void;
    /** Each database's pacer as last adjusted (metrics, status). */
    views(): ReadonlyMap<string, PacerView>;
  }>;

/**
 * Where the process reads its expirer's pacers (/readyz): the expirer role sets `views` when it
 * starts with pacing on; unset, there is none to show.
 */
export type PacingBoard = { views?: () => ReadonlyMap<string, PacerView> };

export type DatabasePacingOptions = Readonly<{
  databases: readonly string[];
  settings: PacerSettings;
  clock: Clock;
  /** How often the pacers adjust (and signals are read). */
  intervalMs: number;
  /**
   * Due entries not read yet (the hold consumer's, past its memory cap): not in the sink's backlog,
   * so counted in the backlog of every database with due rows waiting (erring on the fast side:
   * which database they are for is unknown until they are read). Default none.
   */
  unreadDue?: () => number;
  /** Reads a database's server signals (Threads_running, history list length); none: latency alone. */
  readSignals?: (database: string) => Promise<ServerSignals>;
  /** A database's replicas' lag by their heartbeat, the worst of them (ms); undefined: no replica or not known. */
  replicaLagMs?: (database: string) => number | undefined;
  /** After each adjustment of a database (metrics). */
  onView?: (database: string, view: PacerView) => void;
  logger: Logger;
}>;

/**
 * A paced database takes a tenth of a second's rows per batch: the load it gets is then spread
 * evenly over the second, instead of one batch of a second's rows committing at once, which
 * stalls every other query on the server while it runs (seen in the isolation bench: at
 * 2,200 rows/s in batches of 2,000 the application's P99 was 96 ms; see docs/capacity.md).
 */
const PACED_BATCH_SECONDS = 0.1;
/** Below this a batch is mostly its transaction's fixed cost. */
const MIN_PACED_BATCH = 10;

export function createDatabasePacing(opts: DatabasePacingOptions): DatabasePacing {
  const pacers = new Map(opts.databases.map((d) => [d, new Pacer(opts.settings, opts.clock)]));
  const buckets = new Map<string, TokenBucket>();
  const signals = new Map<string, ServerSignals>();
  const reading = new Set<string>();
  const failing = new Set<string>();

  const bucketOf = (database: string) => buckets.get(database);

  /** One read per database at a time; its answer is used by the next adjustment if it came within the interval. */
  const read = (database: string, started: number): void => {
    if (opts.readSignals === undefined || reading.has(database)) return;
    reading.add(database);
    opts.readSignals(database).then(
      (s) => {
        reading.delete(database);
        if (failing.delete(database)) opts.logger.info({ database }, 'pacing reads the database signals again');
        if (opts.clock.now() - started <= opts.intervalMs) signals.set(database, s);
        else signals.delete(database);
      },
      (err: unknown) => {
        reading.delete(database);
        signals.delete(database);
        if (!failing.has(database))
          opts.logger.warn({ err, database }, 'pacing could not read the database signals; paced by commit latency alone until it can');
        failing.add(database);
      },
    );
  };

  const adjust = (source: Readonly<{ backlogOf(database: string, now: number): Backlog }>): boolean => {
    let raised = false;
    const now = opts.clock.now();
    /** Read once per adjustment, and only if a database has due rows waiting. */
    let unreadDue: number | undefined;
    for (const [database, pacer] of pacers) {
      // A read still in flight from the last adjustment is slow: no signal until one comes in time.
      if (reading.has(database)) signals.delete(database);
      const lag = opts.replicaLagMs?.(database);
      pacer.observeSignals({ ...signals.get(database), ...(lag !== undefined && { replicaLagMs: lag }) });
      const before = bucketOf(database)?.ratePerSecond ?? Number.POSITIVE_INFINITY;
      const backlog = source.backlogOf(database, now);
      const unread = backlog.dueRows > 0 ? (unreadDue ??= opts.unreadDue?.() ?? 0) : 0;
      const view = pacer.adjust(unread > 0 ? { ...backlog, dueRows: backlog.dueRows + unread } : backlog);
      if (view.rate === Number.POSITIVE_INFINITY) buckets.delete(database);
      else {
        const bucket = bucketOf(database);
        if (bucket === undefined) buckets.set(database, new TokenBucket(view.rate, opts.clock));
        else bucket.setRate(view.rate);
      }
      if (view.rate > before) raised = true;
      opts.onView?.(database, view);
      read(database, now);
    }
    return raised;
  };

  return {
    allowance: (database) => bucketOf(database)?.available() ?? Number.POSITIVE_INFINITY,
    batchLimit: (database) => {
      const bucket = bucketOf(database);
      return bucket === undefined ? Number.POSITIVE_INFINITY : Math.max(MIN_PACED_BATCH, Math.ceil(bucket.ratePerSecond * PACED_BATCH_SECONDS));
    },
    msUntilAllowed: (database, wanted) => {
      const bucket = bucketOf(database);
      return bucket === undefined || bucket.available() >= 1 ? 0 : bucket.msUntil(wanted);
    },
    consume: (database, n) => {
      pacers.get(database)?.working();
      bucketOf(database)?.take(n);
    },
    observeProbe: (database, latencyMs) => pacers.get(database)?.observeProbe(latencyMs),
    observeBatch: (database, rows, latencyMs) => pacers.get(database)?.observeBatch(rows, latencyMs),
    attach(source) {
      for (const database of pacers.keys()) read(database, opts.clock.now());
      const timer = setInterval(() => {
        // A rate that rose may make work fireable that no timer of the sink waits for.
        if (adjust(source)) source.wake();
      }, opts.intervalMs);
      timer.unref();
      return () => clearInterval(timer);
    },
    views: () => new Map([...pacers].map(([d, p]) => [d, p.current])),
  };
}
