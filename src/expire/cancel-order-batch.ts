/**
 * Cancels one batch of unpaid orders in one transaction, releasing the coupons they
 * hold: lock orders → read the db clock → decide → cancel → release coupons (LOCKED → ACTIVE) →
 * INSERT IGNORE outbox. Orders are locked before coupons, the one lock order in the codebase.
 * The released coupons flow back through CDC and are scheduled (and expired if overdue) there.
 */
import type { Knex } from 'knex';
import { planExpiry, ScheduledEntry } from '../core/expiry-plan';
import { ExpiryPath, orderCancelled } from '../core/events';
import { lockOrders } from './sql/lock-orders';
import { readDbNow } from './sql/read-db-now';
import { cancelOrders } from './sql/cancel-orders';
import { releaseCoupons } from './sql/release-coupons';
import { insertOutbox } from './sql/insert-outbox';
import { BatchOutcome, outcomeOf } from './batch-outcome';

export async function cancelOrderBatch(db: Knex, entries: readonly ScheduledEntry[], path: ExpiryPath): Promise<BatchOutcome> {
  return db.transaction(async (trx) => {
    const rows = await lockOrders(trx, [...new Set(entries.map((e) => e.id))]);
    const dbNowMs = await readDbNow(trx);
    const plan = planExpiry(entries, rows, 'UNPAID', dbNowMs);
    const dbNow = new Date(dbNowMs);
    const dueIds = plan.due.map((r) => r.id);
    await cancelOrders(trx, dueIds, dbNow);
    const released = await releaseCoupons(trx, dueIds);
    await insertOutbox(
      trx,
      plan.due.map((r) => ({
        event: orderCancelled({
          id: r.id,
          userId: r.userId,
          dueAtMs: r.expireAtMs,
          occurredAtMs: dbNowMs,
          path,
          version: r.version + 1,
          couponId: r.couponId,
          couponReleased: released.has(r.id),
        }),
        entityType: 'order' as const,
        entityId: r.id,
      })),
    );
    return outcomeOf(plan, dbNowMs);
  });
}
