/**
 * LOCKED → ACTIVE for the coupons held by orders being cancelled. Inputs: order ids. Output:
 * order id → the id of the coupon it released, both exact decimal strings.
 * Safe to re-run: only coupons still LOCKED by exactly these orders are released. The released
 * coupon's own CDC event schedules it again, so it expires if it is overdue.
 * Indexes forced: the coupons of these orders through idx_coupons_locked_order (the optimizer
 * may otherwise filter every LOCKED coupon of the table through the status index, locking as
 * it goes), then the update by primary key.
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';

/** The locking read (EXPLAIN-checked in tests); binding: the order ids. */
export const RELEASE_LOCK_SQL =
  "SELECT id, locked_order_id FROM coupons FORCE INDEX (idx_coupons_locked_order) WHERE locked_order_id IN (?) AND status = 'LOCKED' ORDER BY id FOR UPDATE";

export async function releaseCoupons(trx: Knex.Transaction, orderIds: readonly string[]): Promise<Map<string, string>> {
  if (orderIds.length === 0) return new Map();
  const [rows] = (await trx.raw(RELEASE_LOCK_SQL,
    [[...orderIds]],
  )) as [Array<{ id: number | string; locked_order_id: number | string }>];
  if (rows.length === 0) return new Map();
  await trx.raw(
    "UPDATE coupons FORCE INDEX (PRIMARY) SET status = 'ACTIVE', locked_order_id = NULL, version = version + 1 WHERE id IN (?) AND status = 'LOCKED'",
    [rows.map((r) => bigintString(r.id, 'coupons.id'))],
  );
  // order id → released coupon id
  return new Map(rows.map((r) => [bigintString(r.locked_order_id, 'coupons.locked_order_id'), bigintString(r.id, 'coupons.id')]));
}
