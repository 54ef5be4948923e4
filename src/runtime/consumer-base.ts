/**
 * What every stage over a group consumer shares (the hold consumer, the repartitioner): its
 * state, its watch, its failure, its readiness and its stop.
 *
 *   NEW → RUNNING → STOPPING → STOPPED
 *           └────→ FAILED      the watch says the consumer crashed for good (kafka/consumer-watch.ts),
 *                              or the stage says it cannot start: logged once, `failed()` resolves,
 *                              health() names the group; the process exits non-zero
 *
 * stop(), once for all callers (a second call returns the first one's promise, which settles
 * when the stop is over): the watch and the stage's timers end, it halts its waits, then two steps
 * each bounded by `stopDeadlineMs` (default 10 s), the stage's own (its last commit, its start-up
 * under way) and leaving the group (kafkajs's disconnect waits on a coordinator that may be
 * gone); a step past its deadline is named in the log and abandoned, which is safe: unfinished
 * entries are re-read from the committed offsets. Then what the stage owns is released.
 *
 * Structural: no kafkajs here (runtime/ imports no adapter); the stage hands in its consumer's
 * disconnect, its watch and its group's first join.
 */
import { settlesWithin, type Component, type Health, type Lifecycle } from './lifecycle';
import type { Logger } from '../ops/logger';

/** A watch over the consumer's liveness (kafka/consumer-watch.ts watchConsumer gives one). */
export type ConsumerLiveness = Readonly<{ health: () => Health; failed: Promise<Error>; stop: () => void }>;

export type ConsumerBaseOptions = Readonly<{
  consumer: Readonly<{ disconnect: () => Promise<void> }>;
  /** The consumer group's id, for logs and health reasons. */
  group: string;
  logger: Logger;
  /** How long stop() waits for each of its two steps. Default 10 s. */
  stopDeadlineMs?: number;
  /** What is logged, at error, when the stage turns FAILED. */
  failedMessage: string;
}>;

export abstract class ConsumerBase implements Component {
  private state: Lifecycle = 'NEW';
  private liveness?: ConsumerLiveness;
  private signalFailed!: (err: Error) => void;
  private readonly failure = new Promise<Error>((resolve) => (this.signalFailed = resolve));
  private joinedGroup: Promise<void> = new Promise(() => undefined);
  private stopped?: Promise<void>;
  private readonly timers: NodeJS.Timeout[] = [];

  protected constructor(private readonly base: ConsumerBaseOptions) {}

  get lifecycle(): Lifecycle {
    return this.state;
  }

  /** Whether the stage runs: what its handlers ask before every step. */
  protected get active(): boolean {
    return this.state === 'RUNNING';
  }

  /** Resolves (never rejects) when the stage is FAILED. */
  failed(): Promise<Error> {
    return this.failure;
  }

  /** Resolves once the consumer has joined its group. */
  ready(): Promise<void> {
    return this.joinedGroup;
  }

  /** ready(), by the name the group protocol gives it. */
  joined(): Promise<void> {
    return this.ready();
  }

  health(): Health {
    if (this.state === 'FAILED') return { ok: false, reason: `${this.base.group}: FAILED` };
    return this.state === 'RUNNING' && this.liveness !== undefined ? this.liveness.health() : { ok: true };
  }

  /** Idempotent: every call returns the first one's promise, settled within twice stopDeadlineMs. */
  stop(): Promise<void> {
    this.stopped ??= this.stopOnce();
    return this.stopped;
  }

  /** NEW → RUNNING, with the group's first join to wait for; false when already started. */
  protected begin(joined: Promise<void>): boolean {
    if (this.state !== 'NEW') return false;
    this.state = 'RUNNING';
    this.joinedGroup = joined;
    return true;
  }

  /** Watches the consumer from now on: a crash for good fails the stage. */
  protected watch(liveness: ConsumerLiveness): void {
    this.liveness = liveness;
    void liveness.failed.then((err) => this.fail(err));
  }

  /** RUNNING → FAILED, logged once; nothing while stopping (a stop is not a failure). */
  protected fail(err: Error): void {
    if (this.state !== 'RUNNING') return;
    this.state = 'FAILED';
    this.base.logger.error({ err }, this.base.failedMessage);
    this.signalFailed(err);
  }

  /**
   * The consumer's start-up (connect, subscribe, run). One that fails leaves the stage STOPPED
   * and its consumer let go (a half-started consumer would keep its connections, and the
   * process, alive), and is thrown.
   */
  protected async startConsumer(startUp: () => Promise<void>): Promise<void> {
    try {
      await startUp();
    } catch (err) {
      this.state = 'STOPPED';
      await this.base.consumer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  /** `tick` every `ms` while the stage runs: stop() clears it first thing. */
  protected every(ms: number, tick: () => Promise<void>): void {
    this.timers.push(setInterval(() => void tick(), ms));
  }

  abstract start(): Promise<void>;

  /** What stop() ends at once (timers, waits), synchronously. */
  protected abstract halt(): void;

  /** What stop() waits for, within the deadline, before leaving the group: its name for the log, and the work. */
  protected abstract settle(): readonly [step: string, work: Promise<unknown>];

  /** After the group is left (or given up on): what the stage owns is closed. */
  protected release(): void {}

  private async stopOnce(): Promise<void> {
    if (this.state === 'STOPPED') return;
    this.state = 'STOPPING';
    this.liveness?.stop();
    for (const timer of this.timers) clearInterval(timer);
    this.halt();
    const deadlineMs = this.base.stopDeadlineMs ?? 10_000;
    const within = async (step: string, work: Promise<unknown>) => {
      // settlesWithin never rejects: the next step follows whatever this one did.
      if (!(await settlesWithin(work, deadlineMs)))
        this.base.logger.warn(
          { group: this.base.group, step, deadlineMs },
          'stop: a step outlived its deadline; abandoned (unfinished entries are re-read from the committed offsets)',
        );
    };
    await within(...this.settle());
    const disconnect = this.base.consumer.disconnect().catch((err: unknown) => this.base.logger.warn({ err }, 'consumer disconnect failed'));
    await within('leave the group', disconnect);
    this.release();
    this.state = 'STOPPED';
  }
}
