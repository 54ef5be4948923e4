/**
 * The operator's switches as this process sees them: read from the database (control_switches,
 * the deployment's rows) every `pollMs`, current state on demand, a subscription to changes.
 * One per process, shared by the expirer and the scanner; every process of a deployment reads
 * the same rows, so `timebucket ctl pause` reaches all of them within a poll interval.
 *
 * Why the database: every role already has it, it is consistent, and a primary-key range read of
 * a few rows (one per entity, and the scanner's) a second is negligible. Failure handling is what makes it safe to lean on:
 *
 *   never read yet (start-up, database down)  → everything counts as paused: a process restarted
 *                                                during a database blip must not fire what the
 *                                                operator paused (and with the database down it
 *                                                could not transition anything anyway)
 *   a poll fails                              → the last known state stays (never "unpaused" on an
 *                                                error); counted, logged once per failing spell
 *   a switch changed                          → one structured log line per switch, then listeners
 *   a row names no switch of this process     → ignored, logged once while it stays (an entity
 *                                                removed from the entities file leaves its row)
 *
 * The polls after the first are the ticks of a PollLoop (runtime/poll-loop.ts): each waits
 * `pollMs` from the end of the previous read (a slow read never overlaps the next), on a sleep
 * stop() cuts short. A read never throws (a failure is the state above), so the loop never fails.
 */
import type { Logger } from '../ops/logger';
import { defaultSwitch, defaultSwitches, sameSwitch, summarize, Switch, SwitchName, Switches, SwitchState } from './switch-state';
import type { SwitchRead } from './sql/switch-store';
import { settlesWithin, type Component, type Health, type Lifecycle } from '../runtime/lifecycle';
import { PollLoop } from '../runtime/poll-loop';

/** How long stop() waits for a poll under way (its read has the database's own timeouts besides). */
const STOP_DEADLINE_MS = 5_000;

export type ControlSwitchesOptions = Readonly<{
  /** The switches this process applies (control-switch-state.ts switchNamesOf). */
  names: readonly SwitchName[];
  /** Reads the deployment's switches (control-switch-store.ts readSwitches over `names`). */
  read: () => Promise<SwitchRead>;
  pollMs: number;
  logger: Logger;
  onPollFailed?: (err: unknown) => void;
}>;

/** What the expirer and the scanner need of the switches (tests hand in fakes). */
export interface SwitchReader {
  /** A name that is not one of the process's switches is a programmer error (ControlSwitches throws). */
  paused(what: SwitchName): boolean;
  /** Transitions a second per process, or undefined when not throttled. */
  perSecond(what: SwitchName): number | undefined;
  /** Calls `listener` after every change; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

export class ControlSwitches implements SwitchReader, Component {
  private state: SwitchState;
  private readonly listeners = new Set<() => void>();
  private readonly polls: PollLoop;
  /** The first read, which start() waits for and stop() too (a read never rejects: poll() catches). */
  private firstRead?: Promise<void>;
  private failing = false;
  /** The ignored row names last logged: logged again only when they change. */
  private ignored = '';

  constructor(private readonly opts: ControlSwitchesOptions) {
    this.state = { known: false, switches: defaultSwitches(opts.names) };
    this.polls = new PollLoop({
      name: 'control switches',
      tick: async (ctx) => {
        await ctx.sleep(opts.pollMs);
        if (!ctx.stopping()) await this.poll();
        return 0; // the wait is the tick's own, before its read
      },
      intervalMs: opts.pollMs,
      backoff: { baseMs: opts.pollMs, maxMs: opts.pollMs },
      stopDeadlineMs: STOP_DEADLINE_MS,
      logger: opts.logger,
    });
  }

  /** Reads once (a failure leaves the state unknown and is retried by the polls), then polls until stop(). */
  async start(): Promise<void> {
    if (this.firstRead !== undefined) return;
    await (this.firstRead = this.poll());
    await this.polls.start();
  }

  /** Idempotent: no poll after it; the one under way is awaited for at most STOP_DEADLINE_MS. */
  async stop(): Promise<void> {
    await Promise.all([this.polls.stop(), settlesWithin(this.firstRead ?? Promise.resolve(), STOP_DEADLINE_MS)]);
  }

  /** RUNNING from start() on (the first read included), then the polls' own. */
  get lifecycle(): Lifecycle {
    return this.firstRead !== undefined && this.polls.lifecycle === 'NEW' ? 'RUNNING' : this.polls.lifecycle;
  }

  /** A failing read keeps the last known state (or everything paused), shown by /readyz: never a failure. */
  health(): Health {
    return { ok: true };
  }

  /** Ready at once: start() has read the switches once. */
  async ready(): Promise<void> {}

  failed(): Promise<Error> {
    return this.polls.failed();
  }

  current(): SwitchState {
    return this.state;
  }

  paused(what: SwitchName): boolean {
    const s = this.switchOf(what);
    return !this.state.known || s.paused;
  }

  perSecond(what: SwitchName): number | undefined {
    return this.switchOf(what).perSecond ?? undefined;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async poll(): Promise<void> {
    let read: SwitchRead;
    try {
      read = await this.opts.read();
    } catch (err) {
      this.opts.onPollFailed?.(err);
      if (!this.failing) {
        this.failing = true;
        const kept = this.state.known ? 'the last known state stays' : 'never read yet: everything stays paused';
        this.opts.logger.warn({ err, ...summarize(this.state) }, `control switches poll failed; ${kept}`);
      }
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.opts.logger.info('control switches poll recovered');
    }
    if (this.lifecycle !== 'RUNNING') return;
    this.noteIgnored(read.unknown);
    this.apply(read.switches);
  }

  private switchOf(what: SwitchName): Switch {
    const s = this.state.switches.get(what);
    if (s === undefined) throw new RangeError(`no control switch '${what}' (switches: ${this.opts.names.join(', ')})`);
    return s;
  }

  private noteIgnored(unknown: readonly string[]): void {
    const key = unknown.join(',');
    if (key === this.ignored) return;
    this.ignored = key;
    if (unknown.length > 0)
      this.opts.logger.warn({ ignored: unknown, switches: this.opts.names }, 'control switch rows naming no entity of the entities file are ignored');
  }

  private apply(read: Switches): void {
    const previous = this.state;
    // Exactly this process's switches, whatever the read returned: a missing one is at its default.
    const now: Switches = new Map(this.opts.names.map((what) => [what, read.get(what) ?? defaultSwitch(what)]));
    const changed = this.opts.names.filter((what) => !sameSwitch(previous.switches.get(what)!, now.get(what)!));
    if (previous.known && changed.length === 0) return;
    this.state = { known: true, switches: now };
    if (!previous.known) this.opts.logger.info(summarize(this.state), 'control switches read');
    for (const what of changed) this.logChange(previous.switches.get(what)!, now.get(what)!, previous.known);
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        this.opts.logger.error({ err }, 'control switch listener failed');
      }
    }
  }

  private logChange(was: Switch, now: Switch, known: boolean): void {
    this.opts.logger.info(
      {
        what: now.what,
        paused: now.paused,
        perSecond: now.perSecond,
        reason: now.reason,
        updatedBy: now.updatedBy,
        updatedAt: now.updatedAt?.toISOString() ?? null,
        was: known ? { paused: was.paused, perSecond: was.perSecond } : 'unknown',
      },
      'control switch changed',
    );
  }
}
