/**
 * The events timebucket publishes for other teams, and their deduplication keys.
 *
 * event_key = <entity>-<transition>-<id>-<expire_time ms>: the same on every replay of the same
 * transition (so a subscriber can drop duplicates, invariant I4), and different when a row
 * legitimately expires again later with a new expire_time.
 *
 * Ids (coupon_id, order_id, user_id) are BIGINT UNSIGNED: snowflake-style ids pass 2^53, where a
 * JS number stops being exact. So in the program and in the outbox payload JSON they are
 * canonical decimal strings; the published Avro field is a `long`, written exactly from them.
 * An Avro long is signed, so an id above 2^63-1 (the upper half of BIGINT UNSIGNED) cannot be
 * published: the relay sets such an event aside as poison rather than wrap it to a negative id.
 */
export const EventTypes = ['COUPON_EXPIRED', 'ORDER_CANCELLED'] as const;
export type EventType = (typeof EventTypes)[number];

/** Which path performed a transition: the bucket stream, the compensation scanner, or a replay. */
export const ExpiryPaths = ['stream', 'scanner', 'replay'] as const;
export type ExpiryPath = (typeof ExpiryPaths)[number];

export function couponExpiredKey(id: string, expireAtMs: number): string {
  return `coupon-expired-${id}-${expireAtMs}`;
}

export function orderCancelledKey(id: string, expireAtMs: number): string {
  return `order-cancelled-${id}-${expireAtMs}`;
}

/** A BIGINT UNSIGNED id as its canonical decimal string ("9223372036854775807"). */
export type DecimalId = string;

export type CouponExpired = Readonly<{
  event_key: string;
  event_type: 'COUPON_EXPIRED';
  coupon_id: DecimalId;
  user_id: DecimalId;
  from_status: 'ACTIVE';
  to_status: 'EXPIRED';
  due_at: number;
  occurred_at: number;
  path: ExpiryPath;
  version: number;
}>;

export type OrderCancelled = Readonly<{
  event_key: string;
  event_type: 'ORDER_CANCELLED';
  order_id: DecimalId;
  user_id: DecimalId;
  from_status: 'UNPAID';
  to_status: 'CANCELLED';
  reason: 'TIMEOUT';
  coupon_id: DecimalId | null;
  coupon_released: boolean;
  due_at: number;
  occurred_at: number;
  path: ExpiryPath;
  version: number;
}>;

export type DomainEvent = CouponExpired | OrderCancelled;

/**
 * What every event says of its transition. Ids are decimal strings, never Number(): an id beyond
 * 2^53 would round to another row's id. version is the row's version after the transition.
 */
export type Transition = Readonly<{ id: DecimalId; userId: DecimalId; dueAtMs: number; occurredAtMs: number; path: ExpiryPath; version: number }>;

/** The event of a coupon ACTIVE → EXPIRED, as every path that expires one writes it to the outbox. */
export function couponExpired(t: Transition): CouponExpired {
  return {
    event_key: couponExpiredKey(t.id, t.dueAtMs),
    event_type: 'COUPON_EXPIRED',
    coupon_id: t.id,
    user_id: t.userId,
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    due_at: t.dueAtMs,
    occurred_at: t.occurredAtMs,
    path: t.path,
    version: t.version,
  };
}

/** The event of an order UNPAID → CANCELLED, with the coupon it held and whether it was released. */
export function orderCancelled(t: Transition & Readonly<{ couponId: DecimalId | null; couponReleased: boolean }>): OrderCancelled {
  return {
    event_key: orderCancelledKey(t.id, t.dueAtMs),
    event_type: 'ORDER_CANCELLED',
    order_id: t.id,
    user_id: t.userId,
    from_status: 'UNPAID',
    to_status: 'CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: t.couponId,
    coupon_released: t.couponReleased,
    due_at: t.dueAtMs,
    occurred_at: t.occurredAtMs,
    path: t.path,
    version: t.version,
  };
}
