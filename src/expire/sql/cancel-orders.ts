/**
 * UNPAID → CANCELLED (reason TIMEOUT) for orders already locked and found due. Inputs: ids,
 * db-now. Output: affected row count.
 * Safe to re-run: guarded by status and expire_time; an order paid meanwhile stays PAID.
 * FORCE INDEX (PRIMARY): the batch is addressed by primary key. Left to itself the optimizer may
 * range-scan (status, expire_time) instead, which in a hot minute walks every due row of the
 * table, and locks the index record just past the range even under READ COMMITTED (a row of
 * another order that its own writer then waits for).
 */
import type { Knex } from 'knex';

export async function cancelOrders(trx: Knex.Transaction, ids: readonly string[], dbNow: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const [result] = (await trx.raw(
    `UPDATE orders FORCE INDEX (PRIMARY) SET status = 'CANCELLED', cancel_time = ?, cancel_reason = 'TIMEOUT', version = version + 1
      WHERE id IN (?) AND status = 'UNPAID' AND expire_time <= ?`,
    [dbNow, [...ids], dbNow],
  )) as [{ affectedRows: number }];
  return result.affectedRows;
}
