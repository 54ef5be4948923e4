/**
 * Event schemas derived from the tables (an entities file without schema files) against the
 * real registry and database: the columns read from information_schema give the same schema on
 * every start (same ids), a subject that held the hand-written schema accepts the derived one
 * (BACKWARD), and events of real transitions are written to event_outbox encoded with it
 * (framed with the derived schema's id) and decode exactly.
 *
 * In a database of this file's own, so its event_outbox holds only this file's transitions' events.
 *
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPATIBILITY, SchemaType } from '@kafkajs/confluent-schema-registry';
import { parseEntityFile } from '../../../src/core/entity-file';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { readEntitySchema } from '../../../src/db/check-entity-schema';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { createSchemaRegistry } from '../../../src/publish/schema-registry';
import { eventSchemas, registerEventSchemas, subjectFor } from '../../../src/publish/schemas';
import { config } from '../../support/stack';
import { catalogue, prefixedWriter, uniqueEventTopics } from './outbox-fixtures';
import { usePublishEnvironment } from './publish-environment';

const env = usePublishEnvironment('derived_schemas');

// The default entities file without its schema files: every event's schema is derived.
type FileEvent = Record<string, unknown>;
type FileTransition = { event: FileEvent; reminders?: { event?: FileEvent; digest?: { event: FileEvent } } };
const file = JSON.parse(readFileSync(join(__dirname, '../../../entities/default.json'), 'utf8')) as { entities: Array<{ transitions: FileTransition[] }> };
for (const t of file.entities.flatMap((e) => e.transitions)) {
  for (const event of [t.event, t.reminders?.event, t.reminders?.digest?.event]) if (event !== undefined) delete event['schemaFile'];
}
const derived = parseEntityFile(file, 'default.json without schema files');

const newTopics = () => uniqueEventTopics('derived');

test('the same schema, hence the same ids, on every registration; a subject holding the schema file accepts it', async () => {
  const tables = await readEntitySchema({ main: env.db }, derived);
  const registry = createSchemaRegistry(config.registry);
  const topics = newTopics();
  const first = await registerEventSchemas(registry, derived, topics, { registry: config.registry, tables });
  await expect(
    registerEventSchemas(registry, derived, topics, { registry: config.registry, tables: await readEntitySchema({ main: env.db }, derived) }),
  ).resolves.toEqual(first);
  const texts = eventSchemas(derived, tables);
  for (const type of derived.events.map((e) => e.type)) {
    await expect(registry.getLatestSchemaId(subjectFor(topics[type]!))).resolves.toBe(first[type]);
    // What the registry holds is the derived text.
    const { schema } = (await (await fetch(`${config.registry.url}/schemas/ids/${first[type]}`)).json()) as { schema: string };
    expect(JSON.parse(schema)).toEqual(JSON.parse(texts[type]!));
  }
  // An integer column stays a long, a nullable one becomes a union with default null.
  const order = JSON.parse(texts['ORDER_CANCELLED']!) as { fields: Array<{ name: string; type: unknown; default?: unknown }> };
  expect(order.fields.find((f) => f.name === 'coupon_id')).toMatchObject({ type: ['null', 'long'], default: null });
  expect(order.fields.find((f) => f.name === 'reason')).toMatchObject({ type: ['null', 'string'], default: null });
  expect(order.fields.find((f) => f.name === 'version')).toMatchObject({ type: 'long' });

  // A team that drops its schema files: the subjects hold the hand-written schemas, the derived ones follow.
  // (The reminders' schema files are their derived records, byte for byte: nothing new to register.)
  const moved = newTopics();
  const fromFiles = await registerEventSchemas(registry, catalogue, moved, { registry: config.registry });
  const next = await registerEventSchemas(registry, derived, moved, { registry: config.registry, tables });
  for (const type of ['COUPON_EXPIRED', 'ORDER_CANCELLED'] as const) {
    expect(next[type]).not.toBe(fromFiles[type]);
    const res = await fetch(`${config.registry.url}/subjects/${encodeURIComponent(subjectFor(moved[type]!))}/versions`);
    expect(await res.json()).toEqual([1, 2]);
  }
  expect(next['COUPON_EXPIRING_SOON']).toBe(fromFiles['COUPON_EXPIRING_SOON']);
  expect(next['USER_COUPONS_EXPIRING_SOON']).toBe(fromFiles['USER_COUPONS_EXPIRING_SOON']);
  // And BACKWARD is still enforced on them.
  const broken = JSON.parse(texts['COUPON_EXPIRED']!) as { fields: unknown[] };
  broken.fields.push({ name: 'brand_new', type: 'long' });
  await expect(
    registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(broken) },
      { subject: subjectFor(moved['COUPON_EXPIRED']!), compatibility: COMPATIBILITY.BACKWARD },
    ),
  ).rejects.toThrow(/ncompatib/);
});

test('events of real transitions encode with the derived schemas and decode exactly', async () => {
  const [coupon, held, order] = ['9007199254740993', '9007199254740995', '9223372036854775807'];
  await env.db.raw(
    `INSERT INTO coupons (id, user_id, status, locked_order_id, expire_time) VALUES
       (${coupon}, 42, 'ACTIVE', NULL, NOW(3) - INTERVAL 1 SECOND), (${held}, 43, 'LOCKED', ${order}, NOW(3) + INTERVAL 1 HOUR)`,
  );
  await env.db.raw(`INSERT INTO orders (id, user_id, status, coupon_id, expire_time) VALUES (${order}, 43, 'UNPAID', ${held}, NOW(3) - INTERVAL 1 SECOND)`);
  const [[c]] = (await env.db.raw(`SELECT expire_time FROM coupons WHERE id = ${coupon}`)) as [[{ expire_time: Date }]];
  const [[o]] = (await env.db.raw(`SELECT expire_time FROM orders WHERE id = ${order}`)) as [[{ expire_time: Date }]];
  // The expirer's writer for the derived catalogue: its schemas derived from the tables and registered first.
  const { write, topics } = await prefixedWriter(env.db, 'derived', { catalogue: derived });
  const batches = createTransitionBatches(env.db, derived, { outbox: write });
  await batches.run(transitionOf(derived, 'coupon', 'expired'), [{ id: coupon, expireAtMs: c.expire_time.getTime() }], 'stream');
  await batches.run(transitionOf(derived, 'order', 'cancelled'), [{ id: order, expireAtMs: o.expire_time.getTime() }], 'scanner');

  const rows = (await env.db('event_outbox').select('event_type', 'topic', 'ce_dataschema', 'payload').orderBy('id')) as Array<{
    event_type: string;
    topic: string;
    ce_dataschema: string;
    payload: Buffer;
  }>;
  expect(rows.map((r) => [r.event_type, r.topic])).toEqual([
    ['COUPON_EXPIRED', topics['COUPON_EXPIRED']],
    ['ORDER_CANCELLED', topics['ORDER_CANCELLED']],
  ]);
  const texts = eventSchemas(derived, await readEntitySchema({ main: env.db }, derived));
  // A fresh client, as a subscriber has: the writer schema is fetched from the registry by the framed id.
  const subscriber = createSchemaRegistry(config.registry);
  const received: Array<Record<string, unknown>> = [];
  for (const r of rows) {
    // Framed with the id of the derived schema, the subject's latest, and named so in ce_dataschema.
    const id = await subscriber.getLatestSchemaId(subjectFor(r.topic));
    expect([r.payload[0], r.payload.readUInt32BE(1)]).toEqual([0, id]);
    expect(r.ce_dataschema).toBe(`${config.registry.url.replace(/\/+$/, '')}/schemas/ids/${id}`);
    const { schema } = (await (await fetch(`${config.registry.url}/schemas/ids/${id}`)).json()) as { schema: string };
    expect(JSON.parse(schema)).toEqual(JSON.parse(texts[r.event_type]!));
    received.push((await subscriber.decode(r.payload)) as Record<string, unknown>);
  }
  expect(received.find((e) => e['event_type'] === 'COUPON_EXPIRED')).toMatchObject({
    coupon_id: BigInt(coupon),
    user_id: 42n,
    version: 1n,
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    path: 'stream',
  });
  expect(received.find((e) => e['event_type'] === 'ORDER_CANCELLED')).toMatchObject({
    ...{ order_id: BigInt(order), user_id: 43n, coupon_id: BigInt(held), coupon_released: true, reason: 'TIMEOUT', version: 1n, path: 'scanner' },
  });
});
