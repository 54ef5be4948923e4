/**
 * The scan cursors (reconcile/sql/claim-scan-page.ts) that have completed a pass: their tables
 * and from-states are past their first pass (core/first-pass-guard.ts). Inputs: the main
 * database (scanner_cursors lives there). Output: the cursor keys. Before `migrate` has created
 * the table, or to an account not granted it (`check` names the missing grant), there are none:
 * every table then counts as on its first pass. Safe to re-run: a plain read of a small table.
 */
import type { Knex } from 'knex';

const NO_SUCH_TABLE = 1146;
const TABLE_ACCESS_DENIED = 1142;

export async function readScannedCursors(main: Knex): Promise<Set<string>> {
  try {
    const [rows] = (await main.raw('SELECT entity FROM scanner_cursors WHERE last_pass_completed_at IS NOT NULL')) as [Array<{ entity: string }>];
    return new Set(rows.map((r) => r.entity));
  } catch (err) {
    const errno = (err as { errno?: number }).errno;
    if (errno === NO_SUCH_TABLE || errno === TABLE_ACCESS_DENIED) return new Set();
    throw err;
  }
}
