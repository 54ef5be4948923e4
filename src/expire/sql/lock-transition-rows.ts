/**
 * Locks the rows of a batch that are in the transition's from-set, by primary key. Inputs: ids.
 * Output: those rows: the id as its exact decimal string, the status, the due time as epoch ms
 * and the columns the event needs (core/events.ts eventColumns), decoded (expire/row-values.ts).
 * An id missing from the output is not in a from-state now (gone, used, LOCKED…) or has no due
 * time any more (its deadline removed): stale for the plan.
 *
 *   SELECT `id`, `status`, `<due>`, <event columns> FROM `<table>` FORCE INDEX (PRIMARY)
 *    WHERE `id` IN (<ids as literals>) AND `status` IN (?from) AND `<due>` IS NOT NULL ORDER BY `id` FOR UPDATE
 *
 * Every row returned is in a from-state by the database's own comparison (the column's
 * collation): the plan takes it as such, so a stored 'active' under a case-insensitive collation
 * is transitioned like 'ACTIVE', as the guarded update would, rather than judged stale for ever.
 *
 * Safe to re-run: a read under FOR UPDATE; InnoDB takes the row locks in primary-key order, so
 * two batches over overlapping ids cannot deadlock on each other. Under READ COMMITTED (db/knex)
 * a row that does not match the status is unlocked at once: a LOCKED coupon, which an order
 * cancellation locks and releases, is never held here, so the two cannot deadlock.
 * FORCE INDEX (PRIMARY): by key, never a scan of the (status, due) index (see transition-rows.ts).
 */
import type { Knex } from 'knex';
import type { Entity, Location, Transition } from '../../core/entity-catalogue';
import type { ReadRow } from '../../core/expiry-plan';
import { eventColumns } from '../../core/events';
import { idList } from '../../db/id-list';
import { quoteId } from '../../db/quote-id';
import { rowsDecoder, type FieldInfo } from '../row-values';

export type LockedTransitionRow = ReadRow;

export type LockTransitionRows = Readonly<{
  sql: string;
  run: (trx: Knex.Transaction, ids: readonly string[]) => Promise<LockedTransitionRow[]>;
}>;

/** `location`: the one table of the entity this batch touches. */
export function lockTransitionRows(entity: Entity, t: Transition, location: Location): LockTransitionRows {
  const wanted = eventColumns(t);
  const extra = wanted.filter((c) => c !== entity.idColumn && c !== entity.status.column && c !== t.due.column);
  const select = [entity.idColumn, entity.status.column, t.due.column, ...extra].map(quoteId).join(', ');
  const id = quoteId(entity.idColumn);
  // The ids go in as literals between the two halves (db/id-list.ts); `sql` shows their place as `?`.
  const head = `SELECT ${select} FROM ${quoteId(location.table)} FORCE INDEX (PRIMARY) WHERE ${id} IN (`;
  const tail = `) AND ${quoteId(entity.status.column)} IN (?) AND ${quoteId(t.due.column)} IS NOT NULL ORDER BY ${id} FOR UPDATE`;
  const decode = rowsDecoder(entity, t, location, wanted);
  return {
    sql: `${head}?${tail}`,
    run: async (trx, ids) => {
      if (ids.length === 0) return [];
      const [rows, fields] = (await trx.raw(head + idList(ids) + tail, [[...t.from]] as Knex.RawBinding[])) as [
        Array<Record<string, unknown>>,
        FieldInfo[] | undefined,
      ];
      return decode(rows, fields);
    },
  };
}
