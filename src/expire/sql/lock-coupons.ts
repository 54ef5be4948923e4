/**
 * Locks a batch of coupons by primary key. Inputs: ids. Output: the rows that exist.
 * Safe to re-run: a read under FOR UPDATE; InnoDB takes the row locks in primary-key order, so
 * two batches over overlapping ids cannot deadlock on each other.
 */
import type { Knex } from 'knex';

export type CouponRow = { id: string; userId: number; status: string; expireAtMs: number; version: number; lockedOrderId: string | null };

export async function lockCoupons(trx: Knex.Transaction, ids: readonly string[]): Promise<CouponRow[]> {
  if (ids.length === 0) return [];
  const [rows] = (await trx.raw(
    'SELECT id, user_id, status, expire_time, version, locked_order_id FROM coupons WHERE id IN (?) ORDER BY id FOR UPDATE',
    [[...ids]],
  )) as [Array<{ id: number | string; user_id: number; status: string; expire_time: Date; version: number; locked_order_id: number | string | null }>];
  return rows.map((r) => ({
    id: String(r.id),
    userId: Number(r.user_id),
    status: r.status,
    expireAtMs: r.expire_time.getTime(),
    version: r.version,
    lockedOrderId: r.locked_order_id === null ? null : String(r.locked_order_id),
  }));
}
