/**
 * The events timebucket publishes for other teams, and their deduplication keys.
 *
 * event_key = <entity>-<transition>-<id>-<expire_time ms>: the same on every replay of the same
 * transition (so a subscriber can drop duplicates, invariant I4), and different when a row
 * legitimately expires again later with a new expire_time.
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

export type CouponExpired = Readonly<{
  event_key: string;
  event_type: 'COUPON_EXPIRED';
  coupon_id: number;
  user_id: number;
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
  order_id: number;
  user_id: number;
  from_status: 'UNPAID';
  to_status: 'CANCELLED';
  reason: 'TIMEOUT';
  coupon_id: number | null;
  coupon_released: boolean;
  due_at: number;
  occurred_at: number;
  path: ExpiryPath;
  version: number;
}>;

export type DomainEvent = CouponExpired | OrderCancelled;
