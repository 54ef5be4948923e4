/**
 * Outbox capture lag, measured end to end: how long an event written into event_outbox takes to
 * reach Kafka through Connect and the Outbox Event Router.
 *
 * Every intervalMs the probe writes one row into each database's event_outbox, routed to the
 * probe topic (core/topology.ts probeTopic), and reads that topic. The lag is the age of the
 * oldest probe written and not yet seen (0 when every probe came back), so it grows by the
 * second while the connector is stopped, failed, or behind, whatever the reason, and falls back
 * once its probes arrive. The rows are ordinary event_outbox rows: in binlog order with the
 * events, so a probe arrives after every event written before it, and retention purges them.
 *
 * A probe seen confirms every earlier probe of its database too: one loop writes them in turn,
 * so the connector read those first. A probe the reader never sees is therefore not stuck as
 * the oldest for good (with Kafka's default group.initial.rebalance.delay.ms the first probes
 * land before the reader's group has a position, and would hold the lag growing forever).
 *
 * The reader is supervised: when kafkajs gives its consumer up (a CRASH it does not restart,
 * "Failed to find group coordinator" after a broker outage), a new consumer of the same group
 * takes over from its committed position, with backoff; meanwhile the lag grows, and once it has
 * been down longer than `stallMs`, health says so.
 *
 * Bounded: at most MAX_PENDING probes are remembered per database; past that the newest are
 * not tracked (the oldest, which sets the lag, is kept). Writes that fail are logged and
 * counted, never thrown: a database that is down is its breaker's and the scanner's to report.
 */
import { randomBytes } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import type { Knex } from 'knex';
import type { Clock } from '../core/clock';
import { backoffMs, Backoffs, RetryPolicies } from '../runtime/retry-policy';
import { retry } from '../runtime/retry';
import { WakeableSleeps } from '../runtime/wakeable-sleeps';
import type { Logger } from '../ops/logger';
import { PollLoop } from '../runtime/poll-loop';
import { NEVER_FAILS, type Component, type Health, type Lifecycle } from '../runtime/lifecycle';
import { group, type Group } from '../runtime/group';
import { watchConsumer, type ConsumerWatch } from '../kafka/consumer-watch';
import type { ConsumerCrashedError } from '../core/errors';
import { insertOutboxProbe } from './sql/insert-outbox-probe';

const MAX_PENDING = 1_000;

export type CaptureProbeOptions = Readonly<{
  /** A pool per database whose event_outbox is probed. */
  dbs: Readonly<Record<string, Knex>>;
  topic: string;
  /** A new consumer of the probe's own group, for each start of the reader: it subscribes and disconnects it. */
  newConsumer: () => Consumer;
  /** The group of those consumers, for health reasons. */
  group: string;
  intervalMs: number;
  /** Health fails once the reader has been down (or made no progress) this long. */
  stallMs: number;
  clock: Clock;
  logger: Logger;
  onWriteFailed?: () => void;
}>;

/** A capture probe: its writes (a PollLoop ticking every intervalMs) and its reader, as one component, with the lag they measure. */
export type CaptureProbe = Group &
  Readonly<{
    /** Seconds since the oldest probe not yet seen was written, per database (0: none pending). */
    lagSeconds: () => Readonly<Record<string, number>>;
    /** How long ago the newest probe of `database` seen on the wire was written (ProbeLedger.confirmedAgeMs). */
    confirmedAgeMs: (database: string) => number | undefined;
  }>;

/**
 * Writing starts at once; the reader starts in the background and is retried with backoff (a
 * probe topic not created yet, a broker away): until it reads, the probes pile up and the lag
 * grows, which is the truth, since nothing confirms the capture meanwhile. A reader that cannot
 * read shows as lag and, past stallMs, on /healthz; never as a failure. Stopped together.
 */
export function captureProbe(opts: CaptureProbeOptions): CaptureProbe {
  const log = opts.logger.child({ component: 'capture-probe' });
  const ledger = new ProbeLedger(opts, log);
  const reader = new ProbeReader({ ...opts, log }, (key) => ledger.seen(key));
  // A tick never throws (a probe not written is counted and logged): the loop only paces.
  const writing = new PollLoop({
    name: 'capture probe',
    tick: async () => {
      for (const [name, db] of Object.entries(opts.dbs)) await ledger.write(name, db);
    },
    intervalMs: opts.intervalMs,
    backoff: Backoffs.captureProbe,
    logger: log,
  });
  return Object.assign(group('capture probe', { reader, writing }, { stopOrder: 'together' }), {
    lagSeconds: () => ledger.lagSeconds(),
    confirmedAgeMs: (database: string) => ledger.confirmedAgeMs(database),
  });
}

/** The probes written and not yet seen, per database, and the capture watermark. */
class ProbeLedger {
  private readonly run = randomBytes(6).toString('hex');
  private readonly pending = new Map<string, Map<string, number>>();
  /** Per database, when the newest probe seen on the wire was written: the capture watermark. */
  private readonly confirmed = new Map<string, number>();
  private sequence = 0;

  constructor(
    private readonly opts: CaptureProbeOptions,
    private readonly log: Logger,
  ) {
    for (const name of Object.keys(opts.dbs)) this.pending.set(name, new Map());
  }

  /** Seconds since the oldest probe not yet seen was written, per database (0: none pending). */
  lagSeconds(): Readonly<Record<string, number>> {
    const now = this.opts.clock.now();
    const out: Record<string, number> = {};
    for (const [name, probes] of this.pending) {
      const oldest = probes.values().next();
      out[name] = oldest.done === true ? 0 : Math.max(0, now - oldest.value) / 1000;
    }
    return out;
  }

  /**
   * How long ago (ms, this process's clock) the newest probe of `database` seen on the wire was
   * written, or undefined while none has been seen. A probe seen means the connector read the
   * binlog past it, not that every event before it was written: Connect sends each partition on
   * its own, and one can still be refusing an earlier event. So retention does not go by it but
   * by the connector's committed offset (connector-watermark.ts).
   */
  confirmedAgeMs(database: string): number | undefined {
    const at = this.confirmed.get(database);
    return at === undefined ? undefined : Math.max(0, this.opts.clock.now() - at);
  }

  /** A probe on the wire: it and every earlier probe of its database are captured. */
  seen(key: string | undefined): void {
    if (key === undefined) return;
    for (const [name, probes] of this.pending) {
      const writtenAt = probes.get(key);
      if (writtenAt === undefined) continue;
      // Oldest first (insertion order): everything up to this one was written before it.
      for (const [k] of probes) {
        probes.delete(k);
        if (k === key) break;
      }
      if (writtenAt > (this.confirmed.get(name) ?? -Infinity)) this.confirmed.set(name, writtenAt);
      return;
    }
  }

  async write(name: string, db: Knex): Promise<void> {
    const key = `probe-${this.run}-${name}-${(this.sequence += 1)}`;
    const probes = this.pending.get(name)!;
    const writtenAt = this.opts.clock.now();
    try {
      await insertOutboxProbe(db, { key, topic: this.opts.topic, writtenAtMs: writtenAt });
      if (probes.size < MAX_PENDING) probes.set(key, writtenAt);
    } catch (err) {
      this.opts.onWriteFailed?.();
      this.log.warn({ err, database: name }, 'capture probe not written; retried at the next interval');
    }
  }
}

/** The reader of the probe topic: a consumer, replaced when kafkajs gives it up; never FAILED. */
class ProbeReader implements Component {
  private state: Lifecycle = 'NEW';
  private readonly sleeps = new WakeableSleeps();
  private reading: Promise<void> = Promise.resolve();
  /** The running reader's watch; undefined while it is being (re)started, since `readerDownAt`. */
  private reader?: ConsumerWatch;
  private readerDownAt: number;
  private readerDownReason = 'not started';
  private signalStopped!: () => void;
  private readonly stopped = new Promise<undefined>((resolve) => (this.signalStopped = () => resolve(undefined)));
  private stopping$?: Promise<void>;

  constructor(
    private readonly opts: CaptureProbeOptions & Readonly<{ log: Logger }>,
    private readonly onSeen: (key: string | undefined) => void,
  ) {
    this.readerDownAt = opts.clock.now();
  }

  get lifecycle(): Lifecycle {
    return this.state;
  }

  private get stopping(): boolean {
    return this.state !== 'RUNNING';
  }

  async start(): Promise<void> {
    if (this.state !== 'NEW') return;
    this.state = 'RUNNING';
    this.reading = this.readLoop();
  }

  /** Idempotent: every call returns the first one's promise. */
  stop(): Promise<void> {
    this.stopping$ ??= (async () => {
      if (this.state === 'RUNNING') this.state = 'STOPPING';
      this.sleeps.wakeAll();
      this.signalStopped();
      await this.reading;
      this.state = 'STOPPED';
    })();
    return this.stopping$;
  }

  /** Ready at once: its lag is what shows the capture. */
  async ready(): Promise<void> {}

  health(): Health {
    if (this.state !== 'RUNNING') return { ok: true };
    if (this.reader !== undefined) return this.reader.health();
    const down = this.opts.clock.now() - this.readerDownAt;
    return down > this.opts.stallMs ? { ok: false, reason: `capture probe reader down for ${down} ms: ${this.readerDownReason}` } : { ok: true };
  }

  failed(): Promise<Error> {
    return NEVER_FAILS;
  }

  /**
   * Reads until stopped: a consumer, started again by the one retry runner with backoff while it
   * cannot start; once one has read, until kafkajs gives it up, then a new one after a first
   * backoff (the runner's count starts again).
   */
  private async readLoop(): Promise<void> {
    const { topic } = this.opts;
    while (!this.stopping) {
      const crashed = await retry(() => this.readWithOneConsumer(), {
        policy: RetryPolicies.probeReader,
        what: 'capture probe reader',
        log: (err, attempt) => this.opts.log.warn({ err, topic, attempt }, 'capture probe cannot read its topic yet; retried (the lag grows meanwhile)'),
        keepGoing: () => !this.stopping,
        sleep: (ms) => this.sleeps.sleep(ms),
      }).catch(() => undefined); // only a stop ends these retries
      if (crashed === undefined || this.stopping) return;
      await this.sleeps.sleep(backoffMs(1, Backoffs.captureProbe));
    }
  }

  /**
   * One consumer: resolves with its crash once kafkajs gives it up (the reader is down), or
   * undefined when stopped; rejects when it cannot start. Always let go of at the end.
   */
  private async readWithOneConsumer(): Promise<ConsumerCrashedError | undefined> {
    const { topic } = this.opts;
    const consumer = this.opts.newConsumer();
    const watch = watchConsumer(consumer, { group: this.opts.group, clock: this.opts.clock, stallMs: this.opts.stallMs });
    try {
      // Stopping does not wait for a connect that hangs (a broker away): kafkajs gives up on its own.
      await Promise.race([consumer.connect(), this.stopped]);
      if (this.stopping) return undefined;
      // Only probes written from now on are ours: a new group starts at the end of the topic
      // (a restarted reader, at its group's committed position).
      await consumer.subscribe({ topics: [topic], fromBeginning: false });
      await consumer.run({ eachMessage: async ({ message }) => this.onSeen(message.headers?.['event_key']?.toString()) });
      this.reader = watch;
      const crashed = await Promise.race([watch.failed, this.stopped]);
      if (crashed === undefined) return undefined;
      this.markReaderDown(crashed.cause instanceof Error ? crashed.cause.message : crashed.message);
      this.opts.log.warn({ err: crashed, topic }, 'capture probe reader crashed; a new consumer takes over (the lag grows meanwhile)');
      return crashed;
    } catch (err) {
      this.markReaderDown(err instanceof Error ? err.message : String(err));
      throw err;
    } finally {
      watch.stop();
      await consumer.disconnect().catch(() => undefined);
    }
  }

  private markReaderDown(reason: string): void {
    this.reader = undefined;
    this.readerDownAt = this.opts.clock.now();
    this.readerDownReason = reason;
  }
}
