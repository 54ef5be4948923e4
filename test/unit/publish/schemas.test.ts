/**
 * The default events' schema files against the payloads the expirer writes (core/events.ts
 * transitionEvent): each file holds exactly the payload's fields and encodes it, so a field
 * added to the entities file without the schema (or the reverse) fails here rather than as
 * poison rows in production. And what loadEventSchema refuses.
 */
import { Type } from 'avsc';
import { transitionOf } from '../../../src/core/entity-catalogue';
import type { EntityCatalogue, EventSpec } from '../../../src/core/entity-catalogue';
import { ConfigError } from '../../../src/core/errors';
import { digestEvents, reminderEvent, transitionEvent } from '../../../src/core/events';
import { exactLongHook } from '../../../src/publish/exact-long';
import { eventSchemas, loadEventSchema, subjectFor } from '../../../src/publish/schemas';
import { catalogue, couponExpired } from './default-catalogue';

type Field = { name: string; type: unknown; doc?: string; default?: unknown };

/** The payload of one event of `spec`'s (a transition, a reminder or a digest), as the expirer writes it to the outbox. */
function samplePayload(spec: EventSpec): Record<string, unknown> {
  const t = transitionOf(catalogue, spec.entity, spec.transition);
  const columns = { user_id: '2', version: 0, coupon_id: null, face_value: '10.00' };
  if (spec.kind === 'transition') {
    const row = { id: '1', status: t.from[0]!, dueAtMs: 2, columns };
    return { ...transitionEvent(t, row, { occurredAtMs: 3, path: 'stream', effects: t.effects.map(() => false) }) };
  }
  const row = { id: '1', status: t.from[0]!, expireAtMs: 5, columns };
  const facts = { occurredAtMs: 3, path: 'stream', beforeMs: 2 } as const;
  if (spec.kind === 'reminder') return { ...reminderEvent(t, spec, row, facts) };
  return { ...digestEvents(t, spec, [row], { ...facts, user: '2', windowStartMs: 1 })[0]! };
}

const timestamp = { type: 'long', logicalType: 'timestamp-millis' };

describe.each(catalogue.events.map((e) => [e.type, e] as const))('%s schema', (_type, spec) => {
  const schema = JSON.parse(loadEventSchema(spec)) as { type: string; namespace: string; doc?: string; fields: Field[] };
  const byName = new Map(schema.fields.map((f) => [f.name, f]));

  test("is a documented record in timebucket.events with exactly the payload's fields, which it encodes", () => {
    expect(schema.type).toBe('record');
    expect(schema.namespace).toBe('timebucket.events');
    expect(schema.doc).toEqual(expect.any(String));
    const payload = samplePayload(spec);
    expect(schema.fields.map((f) => f.name).sort()).toEqual(Object.keys(payload).sort());
    for (const f of schema.fields) expect([f.name, f.doc]).toEqual([f.name, expect.stringMatching(/\S/)]);
    const type = Type.forSchema(schema as never, { typeHook: exactLongHook });
    expect(type.fromBuffer(type.toBuffer(payload))).toMatchObject({ event_key: payload['event_key'], [spec.idField]: BigInt(payload[spec.idField] as string) });
  });

  test('uses longs for ids and timestamp-millis longs for times', () => {
    for (const [name, f] of byName) {
      if (name.endsWith('_at')) expect([name, f.type]).toEqual([name, timestamp]);
      else if (name.endsWith('_id') && name !== 'coupon_id') expect([name, f.type]).toEqual([name, 'long']);
    }
    expect(byName.get(spec.idField)!.type).toBe('long');
    if (spec.type === 'ORDER_CANCELLED') expect(byName.get('coupon_id')).toMatchObject({ type: ['null', 'long'], default: null });
  });
});

describe('loadEventSchema refuses', () => {
  test('a schema file that lacks a field the entities file declares, naming it', () => {
    const spec: EventSpec = { ...couponExpired, fields: [...couponExpired.fields, { name: 'campaign', source: 'column', column: 'campaign_id' }] };
    expect(() => loadEventSchema(spec)).toThrow(ConfigError);
    expect(() => loadEventSchema(spec)).toThrow(/coupon-expired\.avsc .*field 'campaign' is missing \(declared in the entities file\)/);
  });

  test('a schema file whose record has another name', () => {
    expect(() => loadEventSchema({ ...couponExpired, avroName: 'timebucket.events.CouponGone' })).toThrow(
      /named timebucket\.events\.CouponExpired, the entities file says timebucket\.events\.CouponGone/,
    );
  });

  test('a schema file that does not exist', () => {
    expect(() => loadEventSchema({ ...couponExpired, schemaFile: 'coupon-gone.avsc' })).toThrow(/cannot read the schema of COUPON_EXPIRED: coupon-gone\.avsc/);
  });

  test('an event without a schema file when no table columns are given', () => {
    expect(() => loadEventSchema({ ...couponExpired, schemaFile: null })).toThrow(/COUPON_EXPIRED: no schema file, and no table columns/);
  });
});

test("eventSchemas: every event's schema by type, or every problem of every event at once", () => {
  expect(eventSchemas(catalogue)).toEqual(Object.fromEntries(catalogue.events.map((e) => [e.type, loadEventSchema(e)])));
  const broken: EntityCatalogue = { ...catalogue, events: catalogue.events.map((e) => ({ ...e, fields: e.fields.slice(1) })) };
  let problems: unknown;
  try {
    eventSchemas(broken);
  } catch (err) {
    problems = (err as ConfigError).details['problems'];
  }
  expect(problems).toEqual([
    "coupon-expired.avsc (COUPON_EXPIRED): field 'user_id' is neither a standard field nor declared in the entities file",
    "coupon-expiring-soon.avsc (COUPON_EXPIRING_SOON): field 'user_id' is neither a standard field nor declared in the entities file",
    'user-coupons-expiring-soon.avsc (USER_COUPONS_EXPIRING_SOON): items field "face_value" is neither a standard item field nor declared in the entities file',
    "order-cancelled.avsc (ORDER_CANCELLED): field 'user_id' is neither a standard field nor declared in the entities file",
  ]);
});

test('subjects are <topic>-value', () => {
  expect(subjectFor('timebucket.coupon-expired')).toBe('timebucket.coupon-expired-value');
});
