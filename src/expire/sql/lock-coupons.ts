/**
 * Locks the ACTIVE coupons of a batch by primary key. Inputs: ids. Output: those rows, with
 * every BIGINT (id, user_id, locked_order_id) as its exact decimal string; an id missing from
 * the output is not expirable now (gone, used, LOCKED…): stale for the plan.
 * Safe to re-run: a read under FOR UPDATE; InnoDB takes the row locks in primary-key order, so
 * two batches over overlapping ids cannot deadlock on each other. Under READ COMMITTED (db/knex)
 * a row that does not match the status is unlocked at once: a LOCKED coupon, which an order
 * cancellation locks and releases, is never held here, so the two cannot deadlock.
 * FORCE INDEX (PRIMARY): by key, never a scan of the (status, expire_time) index (see expire-coupons.ts).
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';

export type CouponRow = { id: string; userId: string; status: string; expireAtMs: number; version: number; lockedOrderId: string | null };

export async function lockCoupons(trx: Knex.Transaction, ids: readonly string[]): Promise<CouponRow[]> {
  if (ids.length === 0) return [];
  const [rows] = (await trx.raw(
    "SELECT id, user_id, status, expire_time, version, locked_order_id FROM coupons FORCE INDEX (PRIMARY) WHERE id IN (?) AND status = 'ACTIVE' ORDER BY id FOR UPDATE",
    [[...ids]],
  )) as [Array<{ id: number | string; user_id: number | string; status: string; expire_time: Date; version: number; locked_order_id: number | string | null }>];
  return rows.map((r) => ({
    id: bigintString(r.id, 'coupons.id'),
    userId: bigintString(r.user_id, 'coupons.user_id'),
    status: r.status,
    expireAtMs: r.expire_time.getTime(),
    version: r.version,
    lockedOrderId: r.locked_order_id === null ? null : bigintString(r.locked_order_id, 'coupons.locked_order_id'),
  }));
}
