/**
 * Locks the UNPAID orders of a batch by primary key. Inputs: ids. Output: those rows, with every
 * BIGINT (id, user_id, coupon_id) as its exact decimal string; an id missing from the output is
 * not cancellable now (gone, paid…): stale for the plan. Rows that do not match are not kept
 * locked (READ COMMITTED, db/knex.ts); FORCE INDEX (PRIMARY): by key, never a scan of the
 * (status, expire_time) index (see expire-coupons.ts).
 * Safe to re-run: a read under FOR UPDATE. Orders are always locked before their coupons, the
 * one lock order used everywhere, so order and coupon batches cannot deadlock.
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';

export type OrderRow = { id: string; userId: string; status: string; expireAtMs: number; version: number; couponId: string | null };

export async function lockOrders(trx: Knex.Transaction, ids: readonly string[]): Promise<OrderRow[]> {
  if (ids.length === 0) return [];
  const [rows] = (await trx.raw(
    "SELECT id, user_id, status, expire_time, version, coupon_id FROM orders FORCE INDEX (PRIMARY) WHERE id IN (?) AND status = 'UNPAID' ORDER BY id FOR UPDATE",
    [[...ids]],
  )) as [Array<{ id: number | string; user_id: number | string; status: string; expire_time: Date; version: number; coupon_id: number | string | null }>];
  return rows.map((r) => ({
    id: bigintString(r.id, 'orders.id'),
    userId: bigintString(r.user_id, 'orders.user_id'),
    status: r.status,
    expireAtMs: r.expire_time.getTime(),
    version: r.version,
    couponId: r.coupon_id === null ? null : bigintString(r.coupon_id, 'orders.coupon_id'),
  }));
}
