/**
 * The pacers' part of `timebucket ctl status`: what each running expirer's pacer per database last
 * decided (control/sql/pacer-state-store.ts), beside the operator's switches, which it never
 * overrides: a throttle still caps the pacer's rate (the lower wins).
 */
import type { Knex } from 'knex';
import { readPacerStates, type PacerStateRead } from '../control/sql/pacer-state-store';

/** Rows older than this belong to instances that stopped without deleting theirs (killed). */
export const PACER_STATE_FRESH_MS = 30_000;

/** The scope's fresh pacer rows; null when the table is missing (a database `migrate` has not reached yet). */
export async function readPacers(db: Knex, scope: string): Promise<PacerStateRead[] | null> {
  try {
    return await readPacerStates(db, scope, PACER_STATE_FRESH_MS);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ER_NO_SUCH_TABLE') return null;
    throw err;
  }
}

export function pacerLines(pacers: readonly PacerStateRead[] | null): string[] {
  if (pacers === null) return ['pacers: table pacer_state is missing (run `timebucket migrate`)'];
  if (pacers.length === 0) return ['pacers: no expirer has published its pacers in the last 30 s'];
  return ['pacers (rows a second each expirer takes per database; the lower of this and a throttle applies):', ...pacers.map(pacerLine)];
}

function pacerLine(p: PacerStateRead): string {
  const rate = p.rate === null ? 'unlimited' : `${Math.round(p.rate)}/s`;
  const why = p.state === 'healthy' ? 'healthy' : `${p.state}${p.limitedBy === null ? '' : ` (${p.limitedBy})`}`;
  const budget = `oldest due row at ${Math.round(p.budgetUsed * 100)} % of its lateness budget`;
  return `  ${p.database.padEnd(16)} ${rate.padEnd(10)} ${why.padEnd(30)} ${budget}; ${p.instance}, ${(p.ageMs / 1000).toFixed(1)} s ago`;
}
