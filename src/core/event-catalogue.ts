/**
 * The event catalogue: one entry per event type with everything the outside world sees of it.
 * The relay (schema, headers, key), the registry registration, the tests and the AsyncAPI
 * document (docs/asyncapi.yaml, checked against this file in make test) all read it here.
 *
 *   schemaFile  the Avro schema under schemas/, registered as `<topic>-value` (BACKWARD)
 *   topic       the topic in topics/production.json (a topology file may name it otherwise)
 *   ceType      the CloudEvents `type` (header ce_type)
 *   entity      what transitioned; idField is the payload field holding its id, which is also
 *               the message key and the CloudEvents `subject` (header ce_subject)
 */
import type { EntityType } from './bucket-entry';
import type { EventType } from './events';

export type EventSpec = Readonly<{
  type: EventType;
  schemaFile: string;
  avroName: string;
  topic: string;
  ceType: string;
  entity: EntityType;
  idField: 'coupon_id' | 'order_id';
  summary: string;
}>;

export const EventCatalogue: Readonly<Record<EventType, EventSpec>> = Object.freeze({
  COUPON_EXPIRED: Object.freeze({
    type: 'COUPON_EXPIRED',
    schemaFile: 'coupon-expired.avsc',
    avroName: 'timebucket.events.CouponExpired',
    topic: 'timebucket.events.coupon-expired',
    ceType: 'timebucket.coupon.expired',
    entity: 'coupon',
    idField: 'coupon_id',
    summary: 'A coupon went ACTIVE → EXPIRED because its expire_time passed.',
  }),
  ORDER_CANCELLED: Object.freeze({
    type: 'ORDER_CANCELLED',
    schemaFile: 'order-cancelled.avsc',
    avroName: 'timebucket.events.OrderCancelled',
    topic: 'timebucket.events.order-cancelled',
    ceType: 'timebucket.order.cancelled',
    entity: 'order',
    idField: 'order_id',
    summary: 'An unpaid order went UNPAID → CANCELLED because its payment deadline passed; a coupon it held is released.',
  }),
});
