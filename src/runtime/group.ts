/**
 * Components composed into one: a role made of a consumer and its admin client, the outbox
 * keeper's probe and retentions, the whole process (main.ts). A group is itself a Component, so
 * the shape is the same all the way up, and whoever holds one asks it the same questions.
 *
 *   start()   the parts in the order given; a part that fails to start is stopped with the ones
 *             started before it (in reverse) and the error is thrown. A part already started is not
 *             started again (a second start does nothing), so parts may be started one by one
 *             as they are built, and grouped afterwards.
 *   stop()    every part, in reverse order (the last started stops first), each even when an
 *             earlier one failed or hung; whatever the group's own state. A second call returns
 *             the first one's promise. With `stopDeadlineMs` the parts share that deadline: one
 *             still running when its share is spent (at least a second) is named in the log and
 *             left behind, and the next is still stopped; a failed stop is logged. Without it the
 *             first failure is thrown once every part has been asked to stop.
 *   ready()   once every part is ready (each consumer has joined its group).
 *   health()  every part's reason, joined; problems() lists them one by one (for /healthz).
 *   failed()  at the first part FAILED; the group is FAILED then, and stays so once stopped.
 *
 * Parts are named by their keys, in insertion order: names are words, never integers (which
 * JavaScript would order first).
 */
import { NEVER_FAILS, settlesWithin, type Component, type Health, type Lifecycle } from './lifecycle';
import type { Logger } from '../ops/logger';

export type Group = Component & Readonly<{ name: string; problems: () => readonly string[] }>;

export type GroupOptions = Readonly<{
  /** 'reverse' (default): each part after the one started after it; 'together': all at once, for parts that do not depend on each other. */
  stopOrder?: 'reverse' | 'together';
  /** The parts' shared stop deadline; without it, each part's own deadline bounds its stop. */
  stopDeadlineMs?: number;
  /** Where a failed or overrunning stop is logged (with `stopDeadlineMs`). */
  logger?: Logger;
}>;

export function group(name: string, parts: Readonly<Record<string, Component>>, opts: GroupOptions = {}): Group {
  return new ComponentGroup(name, Object.entries(parts), opts);
}

class ComponentGroup implements Group {
  private state: Lifecycle = 'NEW';
  private stopped?: Promise<void>;
  private signalFailed!: (err: Error) => void;
  private readonly failure = new Promise<Error>((resolve) => (this.signalFailed = resolve));

  constructor(
    readonly name: string,
    private readonly parts: ReadonlyArray<readonly [string, Component]>,
    private readonly opts: GroupOptions,
  ) {}

  get lifecycle(): Lifecycle {
    return this.state;
  }

  async start(): Promise<void> {
    if (this.state !== 'NEW') return;
    this.state = 'RUNNING';
    const started: Component[] = [];
    for (const [, part] of this.parts) {
      // Stopped with the others if its start fails: a half-started part may hold connections.
      started.push(part);
      try {
        await part.start();
      } catch (err) {
        for (const done of started.reverse()) await done.stop().catch(() => undefined);
        this.state = 'STOPPED';
        throw err;
      }
    }
    for (const [, part] of this.parts)
      void part.failed().then((err) => {
        if (this.state === 'RUNNING') this.state = 'FAILED';
        this.signalFailed(err);
      });
  }

  stop(): Promise<void> {
    this.stopped ??= this.stopAll();
    return this.stopped;
  }

  ready(): Promise<void> {
    return Promise.all(this.parts.map(([, part]) => part.ready())).then(() => undefined);
  }

  health(): Health {
    const reasons = this.problems();
    return reasons.length === 0 ? { ok: true } : { ok: false, reason: reasons.join('; ') };
  }

  problems(): readonly string[] {
    return this.parts.map(([, part]) => part.health()).flatMap((h) => (h.ok ? [] : [h.reason]));
  }

  failed(): Promise<Error> {
    return this.failure;
  }

  private async stopAll(): Promise<void> {
    const failedBefore = this.state === 'FAILED';
    if (!failedBefore) this.state = 'STOPPING';
    const until = Date.now() + (this.opts.stopDeadlineMs ?? 0);
    const errors: unknown[] = [];
    const stopOne = ([name, part]: readonly [string, Component]) => this.stopPart(name, part, until).catch((err: unknown) => void errors.push(err));
    if (this.opts.stopOrder === 'together') await Promise.all(this.parts.map(stopOne));
    else for (const entry of [...this.parts].reverse()) await stopOne(entry);
    this.state = failedBefore || this.state === 'FAILED' ? 'FAILED' : 'STOPPED';
    if (errors.length > 0) throw errors[0];
  }

  /** One part's stop: its own, or within its share of the deadline, logged and never thrown. */
  private async stopPart(part: string, component: Component, until: number): Promise<void> {
    const { stopDeadlineMs, logger } = this.opts;
    if (stopDeadlineMs === undefined) return component.stop();
    const stopping = component.stop().catch((err: unknown) => logger?.error({ err, part }, 'stop failed'));
    const shareMs = Math.max(1_000, until - Date.now());
    if (!(await settlesWithin(stopping, shareMs)))
      logger?.warn({ part, waitedMs: shareMs }, 'stop: a part did not stop within the shutdown deadline; left behind');
  }
}

/**
 * A part that holds a resource and has only to be closed (a database pool, a producer, an admin
 * client): running once started, always healthy and ready, never FAILED; stop() closes it once.
 */
export function resource(close: () => Promise<void>, open: () => Promise<void> = async () => undefined): Component {
  let state: Lifecycle = 'NEW';
  let closed: Promise<void> | undefined;
  return {
    get lifecycle() {
      return state;
    },
    async start() {
      if (state !== 'NEW') return;
      state = 'RUNNING';
      await open();
    },
    stop() {
      closed ??= (async () => {
        state = 'STOPPING';
        try {
          await close();
        } finally {
          state = 'STOPPED';
        }
      })();
      return closed;
    },
    ready: async () => undefined,
    health: () => ({ ok: true }),
    failed: () => NEVER_FAILS,
  };
}
