/**
 * The naive poller's unit of work (seed 003, solution 1, `cancelTimeoutOrder`): ONE row in its
 * own transaction. Read the row (the payload needs it), the seed's conditional update
 * `WHERE id = ? AND status = 'UNPAID'` (for coupons 'ACTIVE'), and, when it changed the row, the
 * same event_outbox row timebucket writes (its own writer): the same event_key (so exactness is checked the same way)
 * and the same payload fields. Cancelling an order releases the coupon it holds, orders locked
 * before coupons as in timebucket. Time is NOW(3), not the seed's NOW(): the columns keep
 * milliseconds, and the delay figures compare like with like.
 */
import type { Db } from '../../../src/db/knex';
import { bigintString } from '../../../src/db/bigint-string';
import { transitionEvent } from '../../../src/core/events';
import { transitionOf } from '../../../src/core/entity-catalogue';
import type { OutboxWriter } from '../../../src/publish/outbox-writer';
import { loadEntities } from '../../../src/ops/load-entities';

// The demo tables' transitions, as entities/default.json declares them: the events the stream writes.
const catalogue = loadEntities('entities/default.json');
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');

// The events' `path` has three values; a poller is a scanning path, so it says 'scanner'.
const PATH = 'scanner' as const;

type Row = { id: number | string; user_id: number | string; expire_time: Date; version: number; now: Date };

export async function expireOneCoupon(db: Db, outbox: OutboxWriter, id: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const [[row]] = (await trx.raw('SELECT id, user_id, expire_time, version, NOW(3) AS now FROM coupons WHERE id = ? FOR UPDATE', [id])) as [Row[]];
    if (row === undefined) return false;
    const [result] = (await trx.raw("UPDATE coupons SET status = 'EXPIRED', expired_at = ?, version = version + 1 WHERE id = ? AND status = 'ACTIVE'", [
      row.now,
      id,
    ])) as [{ affectedRows: number }];
    if (result.affectedRows === 0) return false;
    const event = transitionEvent(
      couponExpired,
      { id, status: 'ACTIVE', dueAtMs: row.expire_time.getTime(), columns: { user_id: bigintString(row.user_id, 'coupons.user_id'), version: row.version } },
      { occurredAtMs: row.now.getTime(), path: PATH, effects: [] },
    );
    await outbox(trx, [{ event, entityType: 'coupon', entityId: id }]);
    return true;
  });
}

export async function cancelOneOrder(db: Db, outbox: OutboxWriter, id: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const [[row]] = (await trx.raw('SELECT id, user_id, expire_time, version, coupon_id, NOW(3) AS now FROM orders WHERE id = ? FOR UPDATE', [id])) as [
      Array<Row & { coupon_id: number | string | null }>,
    ];
    if (row === undefined) return false;
    const [result] = (await trx.raw(
      "UPDATE orders SET status = 'CANCELLED', cancel_reason = 'TIMEOUT', cancel_time = ?, version = version + 1 WHERE id = ? AND status = 'UNPAID'",
      [row.now, id],
    )) as [{ affectedRows: number }];
    if (result.affectedRows === 0) return false;
    const couponId = row.coupon_id === null ? null : bigintString(row.coupon_id, 'orders.coupon_id');
    let released = false;
    if (couponId !== null) {
      const [release] = (await trx.raw(
        "UPDATE coupons SET status = 'ACTIVE', locked_order_id = NULL, version = version + 1 WHERE id = ? AND locked_order_id = ? AND status = 'LOCKED'",
        [couponId, id],
      )) as [{ affectedRows: number }];
      released = release.affectedRows === 1;
    }
    const event = transitionEvent(
      orderCancelled,
      {
        id,
        status: 'UNPAID',
        dueAtMs: row.expire_time.getTime(),
        columns: { user_id: bigintString(row.user_id, 'orders.user_id'), coupon_id: couponId, version: row.version },
      },
      { occurredAtMs: row.now.getTime(), path: PATH, effects: [released] },
    );
    await outbox(trx, [{ event, entityType: 'order', entityId: id }]);
    return true;
  });
}
