/**
 * The switches' SQL (table control_switches, see its migrations): the poll's read and the
 * operator's writes. Every write sets `updated_at` from the database clock, one clock for every
 * instance and operator.
 */
import type { Knex } from 'knex';
import { defaultSwitch, Switch, SwitchName, Switches } from '../switch-state';

type Row = { what: string; paused: number | boolean; per_second: number | string | null; reason: string | null; updated_by: string; updated_at: Date };

/**
 * `unknown`: rows of the scope naming no switch of `names`, ignored. An entity removed from the
 * entities file leaves its row behind (and an older process may still read it), so such a row
 * is harmless: never an error, and never applied to anything.
 */
export type SwitchRead = Readonly<{ switches: Switches; unknown: readonly string[] }>;

/** The scope's switches among `names` (switchNamesOf); a switch without a row is at its default (running, no throttle). */
export async function readSwitches(db: Knex, scope: string, names: readonly SwitchName[]): Promise<SwitchRead> {
  const rows = (await db('control_switches').where({ scope }).select('what', 'paused', 'per_second', 'reason', 'updated_by', 'updated_at')) as Row[];
  const switches = new Map<SwitchName, Switch>(names.map((what) => [what, defaultSwitch(what)]));
  const unknown: string[] = [];
  for (const r of rows) {
    if (!switches.has(r.what)) {
      unknown.push(r.what);
      continue;
    }
    switches.set(r.what, {
      what: r.what,
      paused: Number(r.paused) === 1,
      perSecond: r.per_second === null ? null : Number(r.per_second),
      reason: r.reason,
      updatedBy: r.updated_by,
      updatedAt: r.updated_at,
    });
  }
  return { switches, unknown: unknown.sort() };
}

export type SwitchChange = Readonly<{ scope: string; what: SwitchName; by: string; reason?: string }>;

/** Pauses or resumes `what`; its throttle is left as it is. */
export async function setPaused(db: Knex, change: SwitchChange, paused: boolean): Promise<void> {
  await db.raw(
    `INSERT INTO control_switches (scope, what, paused, per_second, reason, updated_by, updated_at) VALUES (?, ?, ?, NULL, ?, ?, NOW(3))
       ON DUPLICATE KEY UPDATE paused = VALUES(paused), reason = VALUES(reason), updated_by = VALUES(updated_by), updated_at = NOW(3)`,
    [change.scope, change.what, paused, change.reason ?? null, change.by],
  );
}

/** Throttles `what` to `perSecond` transitions a second per process, or lifts it (null); a pause is left as it is. */
export async function setThrottle(db: Knex, change: SwitchChange, perSecond: number | null): Promise<void> {
  await db.raw(
    `INSERT INTO control_switches (scope, what, paused, per_second, reason, updated_by, updated_at) VALUES (?, ?, FALSE, ?, ?, ?, NOW(3))
       ON DUPLICATE KEY UPDATE per_second = VALUES(per_second), reason = VALUES(reason), updated_by = VALUES(updated_by), updated_at = NOW(3)`,
    [change.scope, change.what, perSecond, change.reason ?? null, change.by],
  );
}
