/**
 * Schema evolution as consumers rely on it (schemas/CHANGELOG.md): timebucket's event schemas
 * registered as `schemas register` registers them (BACKWARD), then a backward-compatible change (a new
 * field with a default) is accepted and an incompatible one (a new field without a default, a
 * field's type changed) is refused by the registry. A subject of the test's own, so the real
 * subjects are never touched.
 *
 * @lane isolated
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { join } from 'node:path';
import { loadEntities } from '../../../src/ops/load-entities';
import { loadEventSchema, setSubjectCompatibility, subjectFor } from '../../../src/publish/schemas';
import { config, uniqueName } from '../../support/stack';

const { events } = loadEntities(join(__dirname, '../../../entities/default.json'));

type AvroRecord = { type: 'record'; name: string; namespace: string; fields: Array<{ name: string; type: unknown; default?: unknown; doc?: string }> };

const registry = new SchemaRegistry({ host: config.registry.url });

async function registered(subject: string, schema: AvroRecord): Promise<number> {
  const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject, compatibility: COMPATIBILITY.BACKWARD });
  return id;
}

describe.each(events.map((e) => [e.type, e] as const))('%s', (type, spec) => {
  const current = JSON.parse(loadEventSchema(spec)) as AvroRecord;
  let subject: string;

  beforeEach(async () => {
    subject = subjectFor(uniqueName(`evolution-${type.toLowerCase()}`));
    await setSubjectCompatibility({ registry: config.registry }, subject, COMPATIBILITY.BACKWARD);
    await registered(subject, current);
  });

  test('a new optional field (with a default) is accepted as a new version', async () => {
    const next: AvroRecord = { ...current, fields: [...current.fields, { name: 'campaign', type: ['null', 'string'], default: null, doc: 'added later' }] };
    const firstId = await registry.getLatestSchemaId(subject);
    const nextId = await registered(subject, next);
    expect(nextId).not.toBe(firstId);
    await expect(registry.getLatestSchemaId(subject)).resolves.toBe(nextId);
  });

  test('a new required field, or a field whose type changes, is refused: old events could not be read', async () => {
    const required: AvroRecord = { ...current, fields: [...current.fields, { name: 'campaign', type: 'string' }] };
    await expect(registered(subject, required)).rejects.toThrow(/incompatible|409|compatib/i);
    const retyped: AvroRecord = { ...current, fields: current.fields.map((f) => (f.name === 'occurred_at' ? { ...f, type: 'string' } : f)) };
    await expect(registered(subject, retyped)).rejects.toThrow(/incompatible|409|compatib/i);
    // The subject still holds only the original.
    const res = await fetch(`${config.registry.url}/subjects/${encodeURIComponent(subject)}/versions`);
    expect(await res.json()).toEqual([1]);
  });
});
