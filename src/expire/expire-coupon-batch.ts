/**
 * Expires one batch of coupons in one transaction:
 *   lock rows → read the db clock → decide (planExpiry) → guarded UPDATE → INSERT IGNORE outbox.
 * The event exists if and only if the transition committed. Re-running the same batch is
 * harmless: rows already EXPIRED are stale and their event_key is already in the outbox.
 */
import type { Knex } from 'knex';
import { planExpiry, ScheduledEntry } from '../core/expiry-plan';
import { couponExpired, ExpiryPath } from '../core/events';
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
      plan.due.map((r) => ({
        event: couponExpired({ id: r.id, userId: r.userId, dueAtMs: r.expireAtMs, occurredAtMs: dbNowMs, path, version: r.version + 1 }),
        entityType: 'coupon' as const,
        entityId: r.id,
      })),
    );
    return outcomeOf(plan, dbNowMs);
  });
}
