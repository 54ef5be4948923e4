import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventCatalogue } from '../../../src/core/event-catalogue';
import { EventTypes } from '../../../src/core/events';
import { loadEventSchema } from '../../../src/publish/schemas';

const root = join(__dirname, '../../..');

describe('the event catalogue', () => {
  test('one entry per event type, each under its own type, CloudEvents type and topic', () => {
    expect(Object.keys(EventCatalogue).sort()).toEqual([...EventTypes].sort());
    for (const [type, spec] of Object.entries(EventCatalogue)) expect(spec.type).toBe(type);
    const specs = Object.values(EventCatalogue);
    for (const field of ['ceType', 'topic', 'schemaFile', 'avroName'] as const) expect(new Set(specs.map((s) => s[field])).size).toBe(specs.length);
  });

  test('its topics are the ones topics/production.json declares', () => {
    const production = JSON.parse(readFileSync(join(root, 'topics/production.json'), 'utf8')) as { events: Array<{ type: string; topic: string }> };
    expect(Object.fromEntries(production.events.map((e) => [e.type, e.topic]))).toEqual(Object.fromEntries(Object.values(EventCatalogue).map((s) => [s.type, s.topic])));
  });

  test('each schema file is the Avro record it names, with the id field as a long and event_key, event_type first', () => {
    for (const spec of Object.values(EventCatalogue)) {
      const schema = JSON.parse(loadEventSchema(spec.type)) as { name: string; namespace: string; fields: Array<{ name: string; type: unknown }> };
      expect(`${schema.namespace}.${schema.name}`).toBe(spec.avroName);
      expect(schema.fields.find((f) => f.name === spec.idField)?.type).toBe('long');
      expect(schema.fields.slice(0, 2).map((f) => f.name)).toEqual(['event_key', 'event_type']);
    }
  });
});
