/**
 * The Kafka headers every published event carries. Subscribers route and deduplicate on
 * headers without decoding the Avro value: `event_key` (the dedup key, invariant I4) and
 * `event_type`, plus the CloudEvents Kafka binding's binary-mode attributes (`ce_*`, and
 * `content-type` for datacontenttype), so CloudEvents SDKs read our messages as events.
 */
import type { EventType } from '../core/events';

export const CE_SPEC_VERSION = '1.0';
/** Names the producing application, not an instance: the same for every relay and replica. */
export const CE_SOURCE = '/timebucket/expirer';
export const CONTENT_TYPE = 'application/avro';

export const ceTypes: Readonly<Record<EventType, string>> = Object.freeze({
  COUPON_EXPIRED: 'timebucket.coupon.expired',
  ORDER_CANCELLED: 'timebucket.order.cancelled',
});

export type EventHeaders = Readonly<Record<string, string>>;

/** Inputs come from a validated payload; an invalid occurredAtMs is a programmer error. */
export function eventHeaders(e: Readonly<{ eventKey: string; eventType: EventType; occurredAtMs: number }>): EventHeaders {
  if (!Number.isFinite(e.occurredAtMs) || Number.isNaN(new Date(e.occurredAtMs).getTime())) {
    throw new RangeError(`occurredAtMs is not a valid instant: ${e.occurredAtMs}`);
  }
  return Object.freeze({
    event_key: e.eventKey,
    event_type: e.eventType,
    ce_id: e.eventKey,
    ce_type: ceTypes[e.eventType],
    ce_source: CE_SOURCE,
    ce_time: new Date(e.occurredAtMs).toISOString(),
    ce_specversion: CE_SPEC_VERSION,
    'content-type': CONTENT_TYPE,
  });
}
