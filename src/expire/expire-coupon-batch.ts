/**
 * Expires one batch of coupons in one transaction:
 *   lock rows → read the db clock → decide (planExpiry) → guarded UPDATE → INSERT IGNORE outbox.
 * The event exists if and only if the transition committed. Re-running the same batch is
 * harmless: rows already EXPIRED are stale and their event_key is already in the outbox.
 */
import type { Knex } from 'knex';
import { planExpiry, ScheduledEntry } from '../core/expiry-plan';
import { couponExpiredKey, CouponExpired, ExpiryPath } from '../core/events';
import { lockCoupons } from './sql/lock-coupons';
import { readDbNow } from './sql/read-db-now';
import { expireCoupons } from './sql/expire-coupons';
import { insertOutbox } from './sql/insert-outbox';
import { BatchOutcome, outcomeOf } from './batch-outcome';

export async function expireCouponBatch(db: Knex, entries: readonly ScheduledEntry[], path: ExpiryPath): Promise<BatchOutcome> {
  return db.transaction(async (trx) => {
    const rows = await lockCoupons(trx, [...new Set(entries.map((e) => e.id))]);
    const dbNowMs = await readDbNow(trx);
    const plan = planExpiry(entries, rows, 'ACTIVE', dbNowMs);
    const dbNow = new Date(dbNowMs);
    await expireCoupons(
      trx,
      plan.due.map((r) => r.id),
      dbNow,
    );
    await insertOutbox(
      trx,
      plan.due.map((r) => {
        const event: CouponExpired = {
          event_key: couponExpiredKey(r.id, r.expireAtMs),
          event_type: 'COUPON_EXPIRED',
          // Decimal strings, never Number(): an id beyond 2^53 would round to another row's id.
          coupon_id: r.id,
          user_id: r.userId,
          from_status: 'ACTIVE',
          to_status: 'EXPIRED',
          due_at: r.expireAtMs,
          occurred_at: dbNowMs,
          path,
          version: r.version + 1,
        };
        return { event, entityType: 'coupon' as const, entityId: r.id };
      }),
    );
    return outcomeOf(plan, dbNowMs);
  });
}
