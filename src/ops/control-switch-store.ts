/**
 * The switches' SQL (table control_switches, see its migration): the poll's read and the
 * operator's writes. Every write sets `updated_at` from the database clock, one clock for every
 * instance and operator.
 */
import type { Knex } from 'knex';
import { SwitchName, SwitchNames, Switch, defaultSwitch } from './control-switch-state';

type Row = { what: string; paused: number | boolean; per_second: number | string | null; reason: string | null; updated_by: string; updated_at: Date };

/** The scope's switches; a switch without a row is at its default (running, no throttle). */
export async function readSwitches(db: Knex, scope: string): Promise<Record<SwitchName, Switch>> {
  const rows = (await db('control_switches').where({ scope }).select('what', 'paused', 'per_second', 'reason', 'updated_by', 'updated_at')) as Row[];
  const out = Object.fromEntries(SwitchNames.map((what) => [what, defaultSwitch(what)])) as Record<SwitchName, Switch>;
  for (const r of rows) {
    if (!(SwitchNames as readonly string[]).includes(r.what)) continue;
    const what = r.what as SwitchName;
    out[what] = {
      what,
      paused: Number(r.paused) === 1,
      perSecond: r.per_second === null ? null : Number(r.per_second),
      reason: r.reason,
      updatedBy: r.updated_by,
      updatedAt: r.updated_at,
    };
  }
  return out;
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
