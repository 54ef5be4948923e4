/**
 * The operator's switches as this process sees them: read from the database (control_switches,
 * the deployment's rows) every `pollMs`, current state on demand, a subscription to changes.
 * One per process, shared by the expirer and the scanner; every process of a deployment reads
 * the same rows, so `timebucket ctl pause` reaches all of them within a poll interval.
 *
 * Why the database: every role already has it, it is consistent, and a primary-key read of three
 * rows a second is negligible. Failure handling is what makes it safe to lean on:
 *
 *   never read yet (start-up, database down)  → everything counts as paused: a process restarted
 *                                                during a database blip must not fire what the
 *                                                operator paused (and with the database down it
 *                                                could not transition anything anyway)
 *   a poll fails                              → the last known state stays (never "unpaused" on an
 *                                                error); counted, logged once per failing spell
 *   a switch changed                          → one structured log line per switch, then listeners
 */
import type { Logger } from './logger';
import { defaultSwitches, sameSwitch, summarize, Switch, SwitchName, SwitchNames, Switches, SwitchState } from './control-switch-state';

export type ControlSwitchesOptions = Readonly<{
  /** Reads the deployment's switches (control-switch-store.ts readSwitches). */
  read: () => Promise<Switches>;
  pollMs: number;
  logger: Logger;
  onPollFailed?: (err: unknown) => void;
}>;

/** What the expirer and the scanner need of the switches (tests hand in fakes). */
export interface SwitchReader {
  paused(what: SwitchName): boolean;
  /** Transitions a second per process, or undefined when not throttled. */
  perSecond(what: SwitchName): number | undefined;
  /** Calls `listener` after every change; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

export class ControlSwitches implements SwitchReader {
  private state: SwitchState = { known: false, switches: defaultSwitches() };
  private readonly listeners = new Set<() => void>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private failing = false;

  constructor(private readonly opts: ControlSwitchesOptions) {}

  /** Reads once (a failure leaves the state unknown and is retried by the polls), then polls until stop(). */
  async start(): Promise<void> {
    await this.poll();
    this.next();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  current(): SwitchState {
    return this.state;
  }

  paused(what: SwitchName): boolean {
    return !this.state.known || this.state.switches[what].paused;
  }

  perSecond(what: SwitchName): number | undefined {
    return this.state.switches[what].perSecond ?? undefined;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private next(): void {
    if (this.stopped) return;
    // A chain of timeouts, not an interval: a slow read (database trouble) never overlaps the next.
    this.timer = setTimeout(() => void this.poll().finally(() => this.next()), this.opts.pollMs);
  }

  private async poll(): Promise<void> {
    let read: Switches;
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
    if (this.stopped) return;
    this.apply(read);
  }

  private apply(read: Switches): void {
    const previous = this.state;
    const changed = SwitchNames.filter((what) => !sameSwitch(previous.switches[what], read[what]));
    if (previous.known && changed.length === 0) return;
    this.state = { known: true, switches: read };
    if (!previous.known) this.opts.logger.info(summarize(this.state), 'control switches read');
    for (const what of changed) this.logChange(previous.switches[what], read[what], previous.known);
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
