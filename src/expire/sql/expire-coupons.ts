/**
 * ACTIVE → EXPIRED for coupons already locked and found due. Inputs: ids, the db-now read in
 * this transaction. Output: affected row count.
 * Safe to re-run: guarded by status and expire_time, so a coupon that was used, expired or had
 * its expiry pushed out meanwhile is not touched (compare-and-set).
 * FORCE INDEX (PRIMARY): the batch is addressed by primary key. Left to itself the optimizer may
 * range-scan (status, expire_time) instead, which in a hot minute walks every due row of the
 * table, and locks the index record just past the range even under READ COMMITTED (a LOCKED
 * coupon that an order cancellation then waits for).
 */
import type { Knex } from 'knex';

export async function expireCoupons(trx: Knex.Transaction, ids: readonly string[], dbNow: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const [result] = (await trx.raw(
    `UPDATE coupons FORCE INDEX (PRIMARY) SET status = 'EXPIRED', expired_at = ?, version = version + 1
      WHERE id IN (?) AND status = 'ACTIVE' AND expire_time <= ?`,
    [dbNow, [...ids], dbNow],
  )) as [{ affectedRows: number }];
  return result.affectedRows;
}
