/**
 * from → to for the rows of a batch already locked and found due: the status, then the
 * transition's assignments (expire/set-clause.ts). Inputs: ids, the db-now read in this
 * transaction. Output: affected row count.
 *
 *   UPDATE `<table>` FORCE INDEX (PRIMARY) SET `status` = ?to, <assignments>
 *    WHERE `id` IN (<ids as literals>) AND `status` IN (?from) AND `<due>` <= ?db-now
 *
 * Safe to re-run: guarded by status and due time (compare-and-set), so a row that moved on
 * (used, paid, already expired) or had its due time pushed out meanwhile is not touched. The
 * bound is the database clock (I2) in the due column's kind (db/due-value.ts dueValueOf).
 * FORCE INDEX (PRIMARY): the batch is addressed by primary key. Left to itself the optimizer may
 * range-scan (status, due) instead, which in a hot minute walks every due row of the table, and
 * locks the index record just past the range even under READ COMMITTED (a LOCKED coupon that an
 * order cancellation then waits for).
 */
import type { Knex } from 'knex';
import type { Entity, Location, Transition } from '../../core/entity-catalogue';
import { dueValueOf } from '../../db/due-value';
import { idList } from '../../db/id-list';
import { quoteId } from '../../db/quote-id';
import { setClause } from '../set-clause';

export type TransitionRows = Readonly<{
  sql: string;
  run: (trx: Knex.Transaction, ids: readonly string[], dbNowMs: number) => Promise<number>;
}>;

export function transitionRows(entity: Entity, t: Transition, location: Location): TransitionRows {
  const set = setClause(entity.status.column, t.to, t.set);
  // The ids go in as literals between the two halves (db/id-list.ts); `sql` shows their place as `?`.
  const head = `UPDATE ${quoteId(location.table)} FORCE INDEX (PRIMARY) SET ${set.sql} WHERE ${quoteId(entity.idColumn)} IN (`;
  const tail = `) AND ${quoteId(entity.status.column)} IN (?) AND ${quoteId(t.due.column)} <= ?`;
  return {
    sql: `${head}?${tail}`,
    run: async (trx, ids, dbNowMs) => {
      if (ids.length === 0) return 0;
      const [result] = (await trx.raw(head + idList(ids) + tail, [
        ...set.values(dbNowMs),
        [...t.from],
        dueValueOf(t.due.kind, dbNowMs),
      ] as Knex.RawBinding[])) as [{ affectedRows: number }];
      return result.affectedRows;
    },
  };
}
