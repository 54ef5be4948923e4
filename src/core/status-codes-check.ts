/**
 * Integer status codes the table does not use. A string status says what it means; a code does
 * not, and a file that gives another team's numbering (1, 2, 3 for a table that holds 10, 20,
 * 30) passes every type check and then never moves a row. Refused only when it is certain: the
 * file declares the status values (the table's states), the table has rows, and no row holds
 * ANY of the declared values. A declared value no row holds yet is normal (a new table, a state
 * nothing has reached), so that alone is never a problem.
 *
 * Pure: what the table holds comes in as data (db/sql/read-status-presence.ts).
 */
import type { StatusValue } from './entity-catalogue';

export type StatusPresence = Readonly<{
  /** `<entity> (<schema>.<table>)`. */
  at: string;
  column: string;
  declared: readonly StatusValue[];
  hasRows: boolean;
  /** Whether some row holds one of `declared`. */
  anyDeclaredHeld: boolean;
  /** Distinct codes of a bounded sample of the rows (for the message). */
  held: readonly unknown[];
}>;

export function statusCodesProblem(p: StatusPresence): string | null {
  if (!p.hasRows || p.anyDeclaredHeld || p.declared.length === 0) return null;
  const held = p.held.map((v) => String(v)).join(', ');
  return (
    `${p.at}: no row holds any of the status values the file declares for ${p.column} (${p.declared.map((v) => JSON.stringify(v)).join(', ')}); ` +
    `its rows hold ${held === '' ? 'other values' : held} (a sample): give this table's own codes in status.values and the transitions' from and to`
  );
}
