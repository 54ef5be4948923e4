/**
 * docs/asyncapi.yaml, the consuming teams' contract: valid AsyncAPI 3 by the AsyncAPI parser
 * (with the Avro payloads, referenced from schemas/, parsed as Avro), and saying what the code
 * does: one channel per event of the default catalogue (entities/default.json), at its topic in
 * topics/production.json, with its Avro schema, its CloudEvents type and every header the outbox connector
 * sets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AvroSchemaParser } from '@asyncapi/avro-schema-parser';
import { Parser, fromFile } from '@asyncapi/parser';
import { eventTopics } from '../../src/core/event-catalogue';
import { parseTopology } from '../../src/core/topology';
import { loadEntities } from '../../src/ops/load-entities';
import { eventHeaders } from '../../src/publish/event-headers';
import { repoRoot } from './tools';

const path = join(repoRoot, 'docs/asyncapi.yaml');
const { events } = loadEntities(join(repoRoot, 'entities/default.json'));
const topics = eventTopics({ events }, parseTopology(readFileSync(join(repoRoot, 'topics/production.json'), 'utf8'), 'topics/production.json'));
type Parsed = Awaited<ReturnType<ReturnType<typeof fromFile>['parse']>>;
let parsed: Parsed;

beforeAll(async () => {
  const parser = new Parser();
  parser.registerSchemaParser(AvroSchemaParser());
  parsed = await fromFile(parser, path).parse();
}, 60_000);

test('the AsyncAPI parser accepts it, with no error and no warning', () => {
  // Severity 0 is an error, 1 a warning.
  expect(parsed.diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
  expect(parsed.document).toBeDefined();
  expect(parsed.document!.version()).toBe('3.0.0');
});

test('its version is the package version', () => {
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  expect(parsed.document!.info().version()).toBe(version);
});

test('one channel per event type, at its production topic, keyed as the outbox connector keys', () => {
  const channels = parsed.document!.channels().all();
  expect(channels.map((c) => c.address()).sort()).toEqual(events.map((s) => topics[s.type]).sort());
  for (const spec of events) {
    const topic = topics[spec.type]!;
    const channel = channels.find((c) => c.address() === topic)!;
    const messages = channel.messages().all();
    expect(messages.map((m) => m.name())).toEqual([spec.type]);
    const kafka = messages[0]!.bindings().get('kafka')!.value() as { key: { type: string }; schemaIdLocation: string; schemaIdPayloadEncoding: string };
    expect(kafka).toMatchObject({ key: { type: 'string' }, schemaIdLocation: 'payload', schemaIdPayloadEncoding: 'confluent' });
    expect(
      parsed
        .document!.operations()
        .all()
        .filter((o) => o.action() === 'send' && o.channels().all()[0]?.address() === topic),
    ).toHaveLength(1);
  }
});

test("each payload is the catalogue's Avro schema, field for field", () => {
  for (const spec of events) {
    const message = parsed
      .document!.messages()
      .all()
      .find((m) => m.name() === spec.type)!;
    expect(message.schemaFormat()).toMatch(/^application\/vnd\.apache\.avro/);
    // The default events all have schema files: the document references them.
    const avsc = JSON.parse(readFileSync(join(repoRoot, 'schemas', spec.schemaFile!), 'utf8')) as { fields: Array<{ name: string }> };
    const properties = Object.keys(message.payload()!.properties() ?? {});
    expect(properties.sort()).toEqual(avsc.fields.map((f) => f.name).sort());
  }
});

test("the headers it documents are exactly the ones the encoder and the outbox connector set, with the catalogue's CloudEvents type", () => {
  for (const spec of events) {
    const message = parsed
      .document!.messages()
      .all()
      .find((m) => m.name() === spec.type)!;
    const headers = message.headers()!.json() as { allOf: Array<{ properties?: Record<string, { const?: string }>; required?: string[] }> };
    const documented = headers.allOf.flatMap((part) => Object.keys(part.properties ?? {}));
    const set = Object.keys(eventHeaders({ eventKey: 'k', event: spec, entityId: '1', occurredAtMs: 0, dataSchema: 'http://r/schemas/ids/1' }));
    expect([...new Set(documented)].sort()).toEqual(set.sort());
    expect(headers.allOf[0]!.required!.sort()).toEqual(set.sort());
    expect(headers.allOf[1]!.properties!['ce_type']!.const).toBe(spec.ceType);
  }
});
