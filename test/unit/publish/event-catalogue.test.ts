/**
 * The default catalogue's events (entities/default.json) against what they are published with:
 * the topics of topics/production.json and the schema files under schemas/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../../src/core/errors';
import { defaultEventTopic, eventFieldNames, eventTopics, withEventTopics } from '../../../src/core/event-catalogue';
import { declaredTopics, parseTopology } from '../../../src/core/topology';
import { loadEventSchema } from '../../../src/publish/schemas';
import { schemaFileProblems } from '../../../src/publish/schema-file-check';
import { catalogue, couponExpired, orderCancelled, root } from './default-catalogue';

const production = parseTopology(readFileSync(join(root, 'topics/production.json'), 'utf8'), 'topics/production.json');

describe("the default catalogue's events", () => {
  test("today's four events (two transitions, a coupon's reminder and a user's digest), each with its own type, CloudEvents type, Avro name and schema file", () => {
    expect(catalogue.events.map((e) => [e.type, e.kind, e.entity, e.transition, e.idField])).toEqual([
      ['COUPON_EXPIRED', 'transition', 'coupon', 'expired', 'coupon_id'],
      ['COUPON_EXPIRING_SOON', 'reminder', 'coupon', 'expired', 'coupon_id'],
      ['USER_COUPONS_EXPIRING_SOON', 'digest', 'coupon', 'expired', 'user_id'],
      ['ORDER_CANCELLED', 'transition', 'order', 'cancelled', 'order_id'],
    ]);
    for (const field of ['type', 'ceType', 'schemaFile', 'avroName'] as const)
      expect(new Set(catalogue.events.map((s) => s[field])).size).toBe(catalogue.events.length);
    expect(couponExpired.ceType).toBe('timebucket.coupon.expired');
    expect(orderCancelled.ceType).toBe('timebucket.order.cancelled');
  });

  test('their topics are the ones topics/production.json declares, and it declares no other event', () => {
    expect(eventTopics(catalogue, production)).toEqual({
      COUPON_EXPIRED: 'timebucket.events.coupon-expired',
      COUPON_EXPIRING_SOON: 'timebucket.events.coupon-expiring-soon',
      USER_COUPONS_EXPIRING_SOON: 'timebucket.events.user-coupons-expiring-soon',
      ORDER_CANCELLED: 'timebucket.events.order-cancelled',
    });
    expect(production.events.map((e) => e.type).sort()).toEqual(catalogue.events.map((e) => e.type).sort());
  });

  test('each schema file is the Avro record the event names, with exactly its fields, the id a long and event_key, event_type first', () => {
    for (const spec of catalogue.events) {
      const schema = JSON.parse(readFileSync(join(root, 'schemas', spec.schemaFile!), 'utf8')) as {
        name: string;
        namespace: string;
        fields: Array<{ name: string; type: unknown }>;
      };
      expect(schemaFileProblems(spec, schema)).toEqual([]);
      expect(`${schema.namespace}.${schema.name}`).toBe(spec.avroName);
      expect(schema.fields.find((f) => f.name === spec.idField)?.type).toBe('long');
      expect(schema.fields.slice(0, 2).map((f) => f.name)).toEqual(['event_key', 'event_type']);
      // Registered as the file is, re-stringified: the bytes of the .avsc files define the contract.
      expect(loadEventSchema(spec)).toBe(JSON.stringify(schema));
    }
  });
});

test('eventFieldNames: the standard fields, the id third, then the declared ones in order', () => {
  expect(eventFieldNames(orderCancelled)).toEqual([
    ...['event_key', 'event_type', 'order_id', 'from_status', 'to_status', 'due_at', 'occurred_at', 'path'],
    ...['user_id', 'reason', 'coupon_id', 'coupon_released', 'version'],
  ]);
});

test('eventTopics names every event the topology has no topic for, at once', () => {
  const thrown = (events: typeof production.events): unknown => {
    try {
      eventTopics(catalogue, { events });
    } catch (err) {
      return err;
    }
    return undefined;
  };
  const one = thrown(production.events.filter((e) => e.type === 'COUPON_EXPIRED'));
  expect(one).toBeInstanceOf(ConfigError);
  expect((one as ConfigError).details['problems']).toEqual([
    'events: no topic for COUPON_EXPIRING_SOON',
    'events: no topic for USER_COUPONS_EXPIRING_SOON',
    'events: no topic for ORDER_CANCELLED',
  ]);
  expect(thrown([])).toMatchObject({
    message: expect.stringMatching(/no topic for COUPON_EXPIRED, COUPON_EXPIRING_SOON, USER_COUPONS_EXPIRING_SOON, ORDER_CANCELLED$/),
  });
});

describe('withEventTopics: an event the topology does not name gets the default topic', () => {
  // The topology of a deployment written before the reminder events existed: it names the two transitions only.
  const older = parseTopology(
    {
      ...JSON.parse(readFileSync(join(root, 'topics/production.json'), 'utf8')),
      events: production.events.filter((e) => e.type === 'COUPON_EXPIRED' || e.type === 'ORDER_CANCELLED').map((e) => ({ ...e, topic: `${e.topic}-v1` })),
    },
    'an older topology',
  );

  test("named topics are kept; each other event gets <prefix>.events.<type>, the due lane's partitions and 7 days, and topics apply declares it", () => {
    const completed = withEventTopics(older, catalogue);
    expect(eventTopics(catalogue, completed)).toEqual({
      COUPON_EXPIRED: 'timebucket.events.coupon-expired-v1',
      COUPON_EXPIRING_SOON: `${older.prefix}.events.coupon-expiring-soon`,
      USER_COUPONS_EXPIRING_SOON: `${older.prefix}.events.user-coupons-expiring-soon`,
      ORDER_CANCELLED: 'timebucket.events.order-cancelled-v1',
    });
    const declared = new Map(declaredTopics(completed).map((d) => [d.topic, d]));
    expect(declared.get(`${older.prefix}.events.coupon-expiring-soon`)).toMatchObject({
      partitions: older.due.partitions,
      config: { 'retention.ms': String(7 * 24 * 3_600_000) },
    });
    expect(Object.isFrozen(completed.events)).toBe(true);
    // Without it no process that writes events can start (exit 78).
    expect(() => eventTopics(catalogue, older)).toThrow(/no topic for COUPON_EXPIRING_SOON, USER_COUPONS_EXPIRING_SOON$/);
  });

  test('eventDefaults sets the partitions and retention of the defaulted topics; a topology naming every event is returned as it is', () => {
    const withDefaults = parseTopology(
      { ...JSON.parse(readFileSync(join(root, 'topics/production.json'), 'utf8')), events: [], eventDefaults: { partitions: 3, retentionMs: 60_000 } },
      'defaults',
    );
    expect(withEventTopics(withDefaults, catalogue).events).toEqual(
      catalogue.events.map((e) => ({ type: e.type, topic: defaultEventTopic(withDefaults, e.type), partitions: 3, retentionMs: 60_000 })),
    );
    expect(withEventTopics(production, catalogue)).toBe(production);
  });

  test('a default name another event already uses is refused, naming the event to give a topic', () => {
    const clash = {
      ...older,
      events: [...older.events, { type: 'SOMETHING_ELSE', topic: defaultEventTopic(older, 'COUPON_EXPIRING_SOON'), partitions: 1, retentionMs: 1 }],
    };
    expect(() => withEventTopics(clash, catalogue)).toThrow(ConfigError);
    expect(() => withEventTopics(clash, catalogue)).toThrow(/default topic of COUPON_EXPIRING_SOON for another event/);
  });
});
