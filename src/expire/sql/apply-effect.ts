/**
 * from → to for the other entity's rows an effect locked (lock-effect-rows.ts): the status,
 * then the effect's assignments (LOCKED → ACTIVE, locked_order_id = NULL, version + 1). Inputs:
 * their ids, the db-now of this transaction. Output: affected row count.
 *
 *   UPDATE `<other table>` FORCE INDEX (PRIMARY) SET `status` = ?to, <assignments>
 *    WHERE `<other id>` IN (?ids) AND `<other status>` IN (?from)
 *
 * Safe to re-run: only rows still in the effect's from-set change, and they are locked by this
 * transaction since the read. A released coupon's own CDC event schedules it again, so it
 * expires if it is overdue.
 * FORCE INDEX (PRIMARY): by key, never a scan of the status index (see transition-rows.ts).
 */
import type { Knex } from 'knex';
import { entityOf, type Effect, type EntityCatalogue } from '../../core/entity-catalogue';
import { quoteId } from '../../db/quote-id';
import { setClause } from '../set-clause';

export type ApplyEffect = Readonly<{
  sql: string;
  run: (trx: Knex.Transaction, ids: readonly string[], dbNowMs: number) => Promise<number>;
}>;

export function applyEffect(catalogue: EntityCatalogue, effect: Effect): ApplyEffect {
  const other = entityOf(catalogue, effect.entity);
  const set = setClause(other.status.column, effect.to, effect.set);
  const sql = `UPDATE ${quoteId(other.locations[0]!.table)} FORCE INDEX (PRIMARY) SET ${set.sql} WHERE ${quoteId(other.idColumn)} IN (?) AND ${quoteId(other.status.column)} IN (?)`;
  return {
    sql,
    run: async (trx, ids, dbNowMs) => {
      if (ids.length === 0) return 0;
      const [result] = (await trx.raw(sql, [...set.values(dbNowMs), [...ids], [...effect.from]] as Knex.RawBinding[])) as [{ affectedRows: number }];
      return result.affectedRows;
    },
  };
}
