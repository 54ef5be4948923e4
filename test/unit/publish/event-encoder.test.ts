import { Type } from 'avsc';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { transitionEvent } from '../../../src/core/events';
import { createEventEncoder } from '../../../src/publish/event-encoder';
import { exactLongHook } from '../../../src/publish/exact-long';
import { eventSchemas } from '../../../src/publish/schemas';
import { catalogue } from './default-catalogue';

const topics = {
  COUPON_EXPIRED: 'shop.events.coupon-expired',
  COUPON_EXPIRING_SOON: 'shop.events.coupon-expiring-soon',
  USER_COUPONS_EXPIRING_SOON: 'shop.events.user-coupons-expiring-soon',
  ORDER_CANCELLED: 'shop.events.order-cancelled',
};
const registryUrl = 'https://user:secret@registry:8081/apis/ccompat/v7/';
const texts = eventSchemas(catalogue);
const expired = transitionOf(catalogue, 'coupon', 'expired');

function couponEvent(id: string, occurredAtMs = Date.UTC(2031, 0, 1, 0, 0, 0, 25)) {
  return transitionEvent(
    expired,
    { id, status: 'ACTIVE', dueAtMs: Date.UTC(2031, 0, 1), columns: { user_id: '9007199254740993', version: 0 } },
    { occurredAtMs, path: 'stream', effects: [] },
  );
}

function encoder() {
  return createEventEncoder({ catalogue, topics, schemaTexts: texts, registryUrl });
}

describe('createEventEncoder', () => {
  test('frames the Avro body with magic byte 0 and the big-endian schema id, exact beyond 2^53', () => {
    const e = encoder();
    e.setSchemaIds({ COUPON_EXPIRED: 258, ORDER_CANCELLED: 7 });
    const event = couponEvent('9223372036854775807');
    const result = e.encode(event, '9223372036854775807');
    if (!result.ok) throw new Error(result.reason);
    expect([...result.row.payload.subarray(0, 5)]).toEqual([0, 0, 0, 1, 2]);
    const type = Type.forSchema(JSON.parse(texts['COUPON_EXPIRED']!), { typeHook: exactLongHook });
    expect(type.fromBuffer(result.row.payload.subarray(5))).toMatchObject({
      coupon_id: 9223372036854775807n,
      user_id: 9007199254740993n,
      event_key: event.event_key,
    });
  });

  test('gives the row its topic, key and CloudEvents header values; the registry credentials stay out', () => {
    const e = encoder();
    e.setSchemaIds({ COUPON_EXPIRED: 12, ORDER_CANCELLED: 13 });
    const event = couponEvent('42');
    const result = e.encode(event, '42');
    expect(result).toMatchObject({
      ok: true,
      row: {
        eventKey: event.event_key,
        topic: 'shop.events.coupon-expired',
        entityId: '42',
        eventType: 'COUPON_EXPIRED',
        ceType: 'timebucket.coupon.expired',
        ceTime: '2031-01-01T00:00:00.025Z',
        dataSchema: 'https://registry:8081/apis/ccompat/v7/schemas/ids/12',
      },
    });
  });

  test('without a schema id an event is not encoded, and says so; complete() tells when every type has one', () => {
    const e = encoder();
    expect(e.complete()).toBe(false);
    expect(e.encode(couponEvent('1'), '1')).toEqual({ ok: false, failure: 'missing-schema-id', reason: 'no schema id for COUPON_EXPIRED yet' });
    expect(e.has('COUPON_EXPIRED')).toBe(false);
    e.setSchemaIds({ COUPON_EXPIRED: 1 });
    expect(e.encode(couponEvent('1'), '1').ok).toBe(true);
    expect(e.complete()).toBe(false);
    e.setSchemaIds({ ORDER_CANCELLED: 2, COUPON_EXPIRING_SOON: 3 });
    expect(e.complete()).toBe(false);
    e.setSchemaIds({ USER_COUPONS_EXPIRING_SOON: 4 });
    expect(e.complete()).toBe(true);
  });

  test('an event its schema rejects is not encoded: rejected, the path named (it is dead-lettered)', () => {
    const e = encoder();
    e.setSchemaIds({ COUPON_EXPIRED: 1, ORDER_CANCELLED: 2 });
    // Above 2^63 - 1: an Avro long cannot hold it.
    const result = e.encode(couponEvent('18446744073709551615'), '18446744073709551615');
    expect(result).toEqual({
      ok: false,
      failure: 'rejected',
      code: 'EVENT_REJECTED',
      reason: expect.stringMatching(/^does not match the Avro schema at .*coupon_id/),
    });
    expect(e.encode({ ...couponEvent('1'), event_type: 'NOPE' }, '1')).toEqual({
      ok: false,
      failure: 'rejected',
      code: 'EVENT_REJECTED',
      reason: "unknown event type 'NOPE'",
    });
  });

  test('an event larger than its topic takes, key and headers included, is rejected as too large; one that fits is encoded', () => {
    const e = createEventEncoder({
      catalogue,
      topics,
      schemaTexts: texts,
      registryUrl,
      maxEventBytes: (topic) => (topic === topics.COUPON_EXPIRED ? 1_000 : 1_000_000),
    });
    e.setSchemaIds({ COUPON_EXPIRED: 1 });
    const fits = e.encode(couponEvent('1'), '1');
    if (!fits.ok) throw new Error(fits.reason);
    // The value alone is under the limit; with the headers counted the record is not.
    const big = { ...couponEvent('2'), event_key: `coupon-expired-2-${'9'.repeat(300)}` };
    const result = e.encode(big, '2');
    expect(result).toEqual({
      ok: false,
      failure: 'rejected',
      code: 'EVENT_TOO_LARGE',
      reason: expect.stringMatching(/^\d+ bytes as a Kafka record, over the 1000 its topic shop\.events\.coupon-expired takes$/),
    });
  });
});
