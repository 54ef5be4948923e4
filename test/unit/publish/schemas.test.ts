/**
 * The .avsc files match the payload types in src/core/events.ts field for field: the sample
 * events below are typed, so a field added to a type without the schema (or the reverse)
 * fails here rather than as poison rows in production.
 */
import type { CouponExpired, EventType, OrderCancelled } from '../../../src/core/events';
import { loadEventSchema, subjectFor } from '../../../src/publish/schemas';

type Field = { name: string; type: unknown; doc?: string; default?: unknown };

const samples: Record<EventType, CouponExpired | OrderCancelled> = {
  COUPON_EXPIRED: {
    event_key: 'coupon-expired-1-2',
    event_type: 'COUPON_EXPIRED',
    coupon_id: '1',
    user_id: '2',
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    due_at: 2,
    occurred_at: 3,
    path: 'stream',
    version: 1,
  },
  ORDER_CANCELLED: {
    event_key: 'order-cancelled-1-2',
    event_type: 'ORDER_CANCELLED',
    order_id: '1',
    user_id: '2',
    from_status: 'UNPAID',
    to_status: 'CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: null,
    coupon_released: false,
    due_at: 2,
    occurred_at: 3,
    path: 'stream',
    version: 1,
  },
};

const timestamp = { type: 'long', logicalType: 'timestamp-millis' };

describe.each(Object.keys(samples) as EventType[])('%s schema', (type) => {
  const schema = JSON.parse(loadEventSchema(type)) as { type: string; namespace: string; doc?: string; fields: Field[] };
  const byName = new Map(schema.fields.map((f) => [f.name, f]));

  test('is a documented record in timebucket.events with exactly the payload fields', () => {
    expect(schema.type).toBe('record');
    expect(schema.namespace).toBe('timebucket.events');
    expect(schema.doc).toEqual(expect.any(String));
    expect(schema.fields.map((f) => f.name)).toEqual(Object.keys(samples[type]));
    for (const f of schema.fields) expect([f.name, f.doc]).toEqual([f.name, expect.stringMatching(/\S/)]);
  });

  test('uses longs for ids and timestamp-millis longs for times', () => {
    for (const [name, f] of byName) {
      if (name.endsWith('_at')) expect([name, f.type]).toEqual([name, timestamp]);
      else if (name.endsWith('_id') && name !== 'coupon_id') expect([name, f.type]).toEqual([name, 'long']);
    }
    const couponId = byName.get('coupon_id')!;
    if (type === 'ORDER_CANCELLED') expect(couponId).toMatchObject({ type: ['null', 'long'], default: null });
    else expect(couponId.type).toBe('long');
  });
});

test('subjects are <topic>-value', () => {
  expect(subjectFor('timebucket.coupon-expired')).toBe('timebucket.coupon-expired-value');
});
