import { dataSchemaUri, eventHeaders } from '../../../src/publish/event-headers';
import { couponExpired, orderCancelled } from './default-catalogue';

const schema = dataSchemaUri('http://registry:8081/apis/ccompat/v7/', 12);

describe('eventHeaders', () => {
  test('carries the dedup key, the event type and the CloudEvents binary-mode attributes', () => {
    const occurredAtMs = Date.UTC(2031, 0, 2, 3, 4, 5, 678);
    expect(eventHeaders({ eventKey: 'coupon-expired-42-1924992000123', event: couponExpired, entityId: '42', occurredAtMs, dataSchema: schema })).toEqual({
      event_key: 'coupon-expired-42-1924992000123',
      event_type: 'COUPON_EXPIRED',
      ce_id: 'coupon-expired-42-1924992000123',
      ce_type: 'timebucket.coupon.expired',
      ce_source: '/timebucket/expirer',
      ce_subject: '42',
      ce_dataschema: 'http://registry:8081/apis/ccompat/v7/schemas/ids/12',
      ce_time: '2031-01-02T03:04:05.678Z',
      ce_specversion: '1.0',
      'content-type': 'application/avro',
    });
  });

  test('names order cancellations by their own CloudEvents type; the subject is the id, exact beyond 2^53', () => {
    const headers = eventHeaders({
      eventKey: 'order-cancelled-7-1',
      event: orderCancelled,
      entityId: '9223372036854775807',
      occurredAtMs: 0,
      dataSchema: schema,
    });
    expect(headers['ce_type']).toBe('timebucket.order.cancelled');
    expect(headers['ce_subject']).toBe('9223372036854775807');
    expect(headers['ce_time']).toBe('1970-01-01T00:00:00.000Z');
  });

  test('refuses an instant that has no ISO-8601 form', () => {
    const e = { eventKey: 'k', event: couponExpired, entityId: '1', dataSchema: schema };
    expect(() => eventHeaders({ ...e, occurredAtMs: Number.NaN })).toThrow(RangeError);
    expect(() => eventHeaders({ ...e, occurredAtMs: 9e15 })).toThrow(RangeError);
  });
});

test("ce_dataschema never carries the registry's credentials", () => {
  expect(dataSchemaUri('https://svc:s3cret@registry.example:8081/apis/ccompat/v7', 3)).toBe('https://registry.example:8081/apis/ccompat/v7/schemas/ids/3');
});

test("ce_type is the event's own, whatever the entities file calls it", () => {
  const event = { type: 'TICKET_LAPSED', ceType: 'com.example.ticket.lapsed' };
  expect(eventHeaders({ eventKey: 'ticket-lapsed-1-2', event, entityId: '1', occurredAtMs: 0, dataSchema: schema })).toMatchObject({
    event_type: 'TICKET_LAPSED',
    ce_type: 'com.example.ticket.lapsed',
  });
});
