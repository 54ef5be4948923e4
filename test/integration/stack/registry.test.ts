/**
 * The schema registry is real and speaks the Confluent API: register an Avro schema and
 * round-trip a record through @kafkajs/confluent-schema-registry.
 *
 * @lane isolated
 */
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { config, uniqueName } from '../../support/stack';

test('registers an Avro schema and encodes and decodes a record', async () => {
  const registry = new SchemaRegistry({ host: config.registry.url });
  const name = uniqueName('Probe').replace(/-/g, '_');
  const schema = JSON.stringify({
    type: 'record',
    name,
    namespace: 'timebucket.test',
    fields: [
      { name: 'event_key', type: 'string' },
      { name: 'due_at', type: { type: 'long', logicalType: 'timestamp-millis' } },
    ],
  });

  const { id } = await registry.register({ type: SchemaType.AVRO, schema }, { subject: `${name}-value` });
  expect(id).toBeGreaterThan(0);
  await expect(registry.getLatestSchemaId(`${name}-value`)).resolves.toBe(id);

  const dueAt = Date.UTC(2031, 0, 1, 0, 0, 0, 123);
  const encoded = await registry.encode(id, { event_key: 'coupon-expire-1-1924992000123', due_at: dueAt });
  // Confluent wire format: magic byte 0, then the 4-byte schema id.
  expect(encoded[0]).toBe(0);
  expect(encoded.readInt32BE(1)).toBe(id);
  await expect(registry.decode(encoded)).resolves.toEqual({ event_key: 'coupon-expire-1-1924992000123', due_at: dueAt });
});
