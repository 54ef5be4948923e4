/**
 * What /readyz answers for `timebucket run`. Ready: every consumer joined its group, the process
 * is healthy and not stopping, and every database it serves answers with its tables checked.
 * The body says what is not: each database (answering or not, since when, why), the switches,
 * a start-up still waiting for what it needs. A paused process is ready (ops/http-server.ts).
 */
import type { SwitchSummary } from '../control/switch-state';
import type { DatabaseState } from '../db/database-watch';

/** The parts of a running process that readiness reads (main.ts Running). */
export type ReadinessSource = Readonly<{
  health: () => Readonly<{ ok: boolean }>;
  control: () => SwitchSummary;
  databases: () => Readonly<Record<string, DatabaseState>>;
}>;

/** `starting`: start-up is retrying: its failed attempts so far and the last one's error. */
export type ProcessPhase = Readonly<{ joined: boolean; stopping: boolean; starting?: Readonly<{ failedAttempts: number; error: string }> }>;

export type Readiness = Readonly<{ ready: boolean; details: Record<string, unknown> }>;

export function processReadiness(running: ReadinessSource | undefined, phase: ProcessPhase): Readiness {
  if (running === undefined) return { ready: false, details: phase.starting === undefined ? {} : { starting: phase.starting } };
  const databases = running.databases();
  const serving = Object.values(databases).every((d) => d.answering && d.checked);
  return {
    ready: phase.joined && !phase.stopping && running.health().ok && serving,
    details: {
      control: running.control(),
      databases: Object.fromEntries(
        Object.entries(databases).map(([name, d]) => [
          name,
          { answering: d.answering, checked: d.checked, since: new Date(d.sinceMs).toISOString(), ...(d.error !== undefined && { error: d.error }) },
        ]),
      ),
    },
  };
}
