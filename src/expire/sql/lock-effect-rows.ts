/**
 * Locks the rows of the other entity that an effect changes: those whose `column` holds one of
 * the transitioned rows' ids and whose status is in the effect's from-set (an order's LOCKED
 * coupon). Inputs: the ids of the rows being transitioned. Output: the other rows' ids and, for
 * each, the transitioned row it belongs to, both exact decimal strings.
 *
 *   SELECT `<other id>`, `<column>` FROM `<other table>` FORCE INDEX (`<effect index>`)
 *    WHERE `<column>` IN (?ids) AND `<other status>` IN (?from) ORDER BY `<other id>` FOR UPDATE
 *
 * Safe to re-run: a read under FOR UPDATE, taken after the transition's own rows (the one lock
 * order: an order before its coupons), so an expiry batch and an effect never deadlock. Under
 * READ COMMITTED (db/knex) the sparse index's gaps are not locked, so checkouts writing `column`
 * next to these rows do not wait.
 * FORCE INDEX (the effect's index on `column`): the optimizer may otherwise filter every row of
 * the from-state (every LOCKED coupon of the table) through the status index, locking as it
 * goes. EXPLAIN-checked, with batch-sized IN lists, in test/integration/expire/large-in-lists.
 */
import type { Knex } from 'knex';
import { entityOf, type Effect, type EntityCatalogue } from '../../core/entity-catalogue';
import { bigintString } from '../../db/bigint-string';
import { quoteId } from '../../db/quote-id';
import { columnValueOf, fieldTypes, type FieldInfo } from '../row-values';

export type EffectRow = Readonly<{ id: string; owner: string }>;

export type LockEffectRows = Readonly<{
  sql: string;
  run: (trx: Knex.Transaction, ownerIds: readonly string[]) => Promise<EffectRow[]>;
}>;

export function lockEffectRows(catalogue: EntityCatalogue, effect: Effect): LockEffectRows {
  const other = entityOf(catalogue, effect.entity);
  const id = quoteId(other.idColumn);
  const column = quoteId(effect.column);
  const sql =
    `SELECT ${id}, ${column} FROM ${quoteId(other.locations[0]!.table)} FORCE INDEX (${quoteId(effect.index)})` +
    ` WHERE ${column} IN (?) AND ${quoteId(other.status.column)} IN (?) ORDER BY ${id} FOR UPDATE`;
  return {
    sql,
    run: async (trx, ownerIds) => {
      if (ownerIds.length === 0) return [];
      const [rows, fields] = (await trx.raw(sql, [[...ownerIds], [...effect.from]] as Knex.RawBinding[])) as [
        Array<Record<string, unknown>>,
        FieldInfo[] | undefined,
      ];
      const types = fieldTypes(fields);
      const what = `${other.table}.${effect.column}`;
      return rows.map((r) => ({
        id: bigintString(r[other.idColumn], `${other.table}.${other.idColumn}`),
        owner: String(columnValueOf(r[effect.column], types.get(effect.column), what)),
      }));
    },
  };
}
