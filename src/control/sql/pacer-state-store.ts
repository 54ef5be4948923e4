/**
 * The statements of pacer_state (db/migrations/20270401000000-create-pacer-state.ts): what each
 * expirer's pacers last decided, for `ctl status`.
 *
 *   writePacerStates   inputs: scope, instance, one row per database. One upsert a row on the primary
 *                      key (scope, instance, database_name), updated_at = NOW(3): re-running it only
 *                      refreshes the same rows.
 *   deletePacerStates  inputs: scope, instance. Deletes that instance's rows by its key prefix;
 *                      nothing else is touched, and a second run finds nothing.
 *   readPacerStates    inputs: scope, freshMs. The scope's rows refreshed within freshMs by the
 *                      database clock (older ones are instances that died), by instance and
 *                      database; reads only.
 */
import type { Knex } from 'knex';

/** One database's pacer, as an instance writes it. */
export type PacerStateRow = Readonly<{
  database: string;
  /** Rows a second; null: unlimited. */
  rate: number | null;
  healthRate: number | null;
  budgetRate: number | null;
  state: string;
  limitedBy: string | null;
  budgetUsed: number;
}>;

/** As `ctl status` reads it: whose, and how long ago it was refreshed. */
export type PacerStateRead = PacerStateRow & Readonly<{ instance: string; ageMs: number }>;

const finite = (x: number | null): number | null => (x === null || !Number.isFinite(x) ? null : x);

export async function writePacerStates(db: Knex, scope: string, instance: string, rows: readonly PacerStateRow[]): Promise<void> {
  // One upsert per database (a handful), its values repeated: VALUES() in ON DUPLICATE KEY UPDATE
  // is deprecated on MySQL, and the row alias that replaces it is not MariaDB's.
  for (const r of rows) {
    const set = [finite(r.rate), finite(r.healthRate), finite(r.budgetRate), r.state, r.limitedBy, r.budgetUsed];
    await db.raw(
      `INSERT INTO pacer_state (scope, instance, database_name, rate, health_rate, budget_rate, state, limited_by, budget_used, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NOW(3))
       ON DUPLICATE KEY UPDATE rate = ?, health_rate = ?, budget_rate = ?, state = ?, limited_by = ?, budget_used = ?, updated_at = NOW(3)`,
      [scope, instance, r.database, ...set, ...set],
    );
  }
}

export async function deletePacerStates(db: Knex, scope: string, instance: string): Promise<void> {
  await db('pacer_state').where({ scope, instance }).delete();
}

export async function readPacerStates(db: Knex, scope: string, freshMs: number): Promise<PacerStateRead[]> {
  const [rows] = (await db.raw(
    `SELECT instance, database_name, rate, health_rate, budget_rate, state, limited_by, budget_used,
            TIMESTAMPDIFF(MICROSECOND, updated_at, NOW(3)) DIV 1000 AS age_ms
       FROM pacer_state
      WHERE scope = ? AND updated_at >= NOW(3) - INTERVAL ? MICROSECOND
      ORDER BY instance, database_name`,
    [scope, freshMs * 1000],
  )) as [Array<Record<string, unknown>>];
  const num = (v: unknown) => (v === null ? null : Number(v));
  return rows.map((r) => ({
    instance: String(r['instance']),
    database: String(r['database_name']),
    rate: num(r['rate']),
    healthRate: num(r['health_rate']),
    budgetRate: num(r['budget_rate']),
    state: String(r['state']),
    limitedBy: r['limited_by'] === null ? null : String(r['limited_by']),
    budgetUsed: Number(r['budget_used']),
    ageMs: Number(r['age_ms']),
  }));
}
