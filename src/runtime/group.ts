/**
 * Components composed into one: a role made of a consumer and its admin client, the outbox
 * keeper's probe and retentions, the whole process (main.ts). A group is itself a Component, so
 * the shape is the same all the way up, and whoever holds one asks the same five questions of it.
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
  const named = Object.entries(parts);
  let state: Lifecycle = 'NEW';
  let stopped: Promise<void> | undefined;
  let signalFailed!: (err: Error) => void;
  const failure = new Promise<Error>((resolve) => (signalFailed = resolve));
  /** When a shared stop deadline runs out. */
  let until = 0;

  const problems = () => named.map(([, part]) => part.health()).flatMap((h) => (h.ok ? [] : [h.reason]));

  const stopPart = async (part: string, component: Component): Promise<void> => {
    if (opts.stopDeadlineMs === undefined) return component.stop();
    const stopping = component.stop().catch((err: unknown) => opts.logger?.error({ err, part }, 'stop failed'));
    const shareMs = Math.max(1_000, until - Date.now());
    if (!(await settlesWithin(stopping, shareMs)))
      opts.logger?.warn({ part, waitedMs: shareMs }, 'stop: a part did not stop within the shutdown deadline; left behind');
  };

  const stopAll = async (): Promise<void> => {
    const failedBefore = state === 'FAILED';
    if (state !== 'FAILED') state = 'STOPPING';
    until = Date.now() + (opts.stopDeadlineMs ?? 0);
    const errors: unknown[] = [];
    const stopOne = ([part, component]: [string, Component]) => stopPart(part, component).catch((err: unknown) => void errors.push(err));
    if (opts.stopOrder === 'together') await Promise.all(named.map(stopOne));
    else for (const entry of [...named].reverse()) await stopOne(entry);
    state = failedBefore || state === 'FAILED' ? 'FAILED' : 'STOPPED';
    if (errors.length > 0) throw errors[0];
  };

  return {
    name,
    get lifecycle() {
      return state;
    },
    async start() {
      if (state !== 'NEW') return;
      state = 'RUNNING';
      const started: Component[] = [];
      for (const [, component] of named) {
        // Stopped with the others if its start fails: a half-started part may hold connections.
        started.push(component);
        try {
          await component.start();
        } catch (err) {
          for (const part of started.reverse()) await part.stop().catch(() => undefined);
          state = 'STOPPED';
          throw err;
        }
      }
      for (const [, component] of named)
        void component.failed().then((err) => {
          if (state === 'RUNNING') state = 'FAILED';
          signalFailed(err);
        });
    },
    stop() {
      stopped ??= stopAll();
      return stopped;
    },
    ready: () => Promise.all(named.map(([, part]) => part.ready())).then(() => undefined),
    health(): Health {
      const reasons = problems();
      return reasons.length === 0 ? { ok: true } : { ok: false, reason: reasons.join('; ') };
    },
    problems,
    failed: () => failure,
  };
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
