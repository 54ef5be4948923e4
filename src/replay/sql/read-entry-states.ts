/**
 * Reads, without locking, the current state of the rows a batch of one transition's entries
 * names, and the database clock. Inputs: the entity and transition, ids. Output: db-now (epoch
 * ms) and id → { status (typed as the file types it), due time (epoch ms, null when NULL),
 * whether each `value` assignment of the transition holds } (ids as exact decimal strings); an
 * id missing from the map has no row.
 *
 * For `replay --dry-run` and for telling "already done" from "stale" after a replay batch: it
 * explains what the expiry transaction decides (or would), it never decides anything itself.
 * An assignment "holds" when the database finds the column equal to the assigned value
 * (`<=>`: NULL-safe, in the column's own type and collation, so DECIMAL 1 = 1.00 and a NULL
 * assignment holds on NULL), which is what the transaction's UPDATE left there.
 *
 * Safe to re-run: plain consistent reads (READ COMMITTED, db/knex.ts), no FOR UPDATE, so it
 * never waits for nor blocks the live expirer or the application.
 * FORCE INDEX (PRIMARY): addressed by key, like the expiry transaction.
 */
import type { Knex } from 'knex';
import type { Assignment, Entity, Location, StatusValue, Transition } from '../../core/entity-catalogue';
import { bigintString } from '../../db/bigint-string';
import { dueMsOf } from '../../db/due-value';
import { quoteId } from '../../db/quote-id';
import { statusValueOf } from '../../expire/row-values';

export type EntryRowState = Readonly<{
  status: StatusValue;
  /** null: the due column is NULL (the row has no deadline for this transition). */
  expireAtMs: number | null;
  /** Per column of a `value` assignment of the transition: does the row hold the assigned value. */
  holds: Readonly<Record<string, boolean>>;
}>;
export type EntryStates = Readonly<{ dbNowMs: number; rows: ReadonlyMap<string, EntryRowState> }>;

export type EntryStateReader = (ids: readonly string[]) => Promise<EntryStates>;

type ValueAssignment = Extract<Assignment, { kind: 'value' }>;

/** The reader of one transition, its SQL built once. */
export function entryStateReader(db: Knex, entity: Entity, transition: Transition, location: Location): EntryStateReader {
  const { sql, values } = statesQuery(entity, transition, location);
  return async (ids) => {
    const [[clock]] = (await db.raw('SELECT NOW(3) AS now')) as [[{ now: Date }]];
    if (ids.length === 0) return { dbNowMs: clock.now.getTime(), rows: new Map() };
    const [rows] = (await db.raw(sql, [...values.map((a) => a.value), [...new Set(ids)]])) as [Array<Record<string, unknown>>];
    const what = (column: string) => `${transition.ref} ${column}`;
    return {
      dbNowMs: clock.now.getTime(),
      rows: new Map(
        rows.map((r) => {
          const due = r['due'];
          const state: EntryRowState = {
            status: statusValueOf(r['status'], entity.status.type, what(entity.status.column)),
            expireAtMs: due === null ? null : dueMsOf(transition.due.kind, due, what(transition.due.column)),
            holds: Object.fromEntries(values.map((a, i) => [a.column, Number(r[`holds_${i}`]) === 1])),
          };
          return [bigintString(r['id'], what(entity.idColumn)), state];
        }),
      ),
    };
  };
}

/** Bindings: each value assignment's value, then the ids. */
export function statesQuery(entity: Entity, transition: Transition, location: Location): { sql: string; values: readonly ValueAssignment[] } {
  const values = transition.set.filter((a): a is ValueAssignment => a.kind === 'value');
  const holds = values.map((a, i) => `, (${quoteId(a.column)} <=> ?) AS holds_${i}`).join('');
  const id = quoteId(entity.idColumn);
  return {
    sql: `SELECT ${id} AS id, ${quoteId(entity.status.column)} AS status, ${quoteId(transition.due.column)} AS due${holds} FROM ${quoteId(location.table)} FORCE INDEX (PRIMARY) WHERE ${id} IN (?)`,
    values,
  };
}
