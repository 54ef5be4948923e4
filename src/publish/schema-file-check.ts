/**
 * A hand-written schema file (schemas/*.avsc) against the event the entities file declares: its
 * record must be the event's avroName and hold exactly the event's fields, the standard ones and
 * the declared ones, in any order (the file's order is what is published; the two original
 * files interleave the declared fields with the standard ones, and their bytes never change).
 *
 * A field missing from the file is silently dropped by the encoder (Avro writes only the
 * schema's fields), so consumers never see it; an extra one has no payload value and fails
 * every encoding, making each event of the type poison. Both are found here, at start.
 */
import type { EventSpec } from '../core/entity-catalogue';
import { digestItemFieldNames, eventFieldNames } from '../core/event-catalogue';

export type SchemaFileSpec = Pick<EventSpec, 'kind' | 'type' | 'avroName' | 'idField' | 'itemIdField' | 'fields' | 'schemaFile'>;

/** Every way `schema` (the file, parsed) differs from `spec`; empty when it fits. */
export function schemaFileProblems(spec: SchemaFileSpec, schema: unknown): string[] {
  const at = `${spec.schemaFile ?? '(no schema file)'} (${spec.type})`;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [`${at}: not an Avro record`];
  const record = schema as { type?: unknown; name?: unknown; namespace?: unknown; fields?: unknown };
  const problems: string[] = [];
  if (record.type !== 'record') problems.push(`${at}: type is ${JSON.stringify(record.type)}, not "record"`);
  const fullName = fullNameOf(record.name, record.namespace);
  if (fullName !== spec.avroName) problems.push(`${at}: the record is named ${fullName ?? '(no name)'}, the entities file says ${spec.avroName}`);
  if (!Array.isArray(record.fields)) return [...problems, `${at}: has no fields list`];

  const names: string[] = [];
  record.fields.forEach((f: unknown, i) => {
    const name = f !== null && typeof f === 'object' ? (f as { name?: unknown }).name : undefined;
    if (typeof name !== 'string') problems.push(`${at}: field ${i} has no name`);
    else if (names.includes(name)) problems.push(`${at}: field '${name}' is listed twice`);
    else names.push(name);
  });
  const expected = eventFieldNames(spec);
  const declared = new Set(spec.fields.map((f) => f.name));
  for (const name of expected) {
    if (!names.includes(name))
      problems.push(`${at}: field '${name}' is missing (${declared.has(name) ? 'declared in the entities file' : 'a standard field'})`);
  }
  for (const name of names) {
    if (!expected.includes(name)) problems.push(`${at}: field '${name}' is neither a standard field nor declared in the entities file`);
  }
  if (spec.kind === 'digest') problems.push(...itemProblems(spec, record.fields as unknown[], at));
  return problems;
}

/** A digest's `items`: an array of records with exactly the item fields. */
function itemProblems(spec: SchemaFileSpec, fields: readonly unknown[], at: string): string[] {
  const items = fields.find((f) => (f as { name?: unknown } | null)?.name === 'items') as { type?: unknown } | undefined;
  if (items === undefined) return [];
  const type = items.type as { type?: unknown; items?: unknown } | undefined;
  const record = type?.type === 'array' ? (type.items as { type?: unknown; fields?: unknown } | undefined) : undefined;
  if (record?.type !== 'record' || !Array.isArray(record.fields)) return [`${at}: field 'items' is not an array of records`];
  const names = record.fields.map((f: unknown) => (f as { name?: unknown } | null)?.name);
  const expected = digestItemFieldNames(spec);
  return [
    ...expected.filter((n) => !names.includes(n)).map((n) => `${at}: items field '${n}' is missing`),
    ...names
      .filter((n) => typeof n !== 'string' || !expected.includes(n))
      .map((n) => `${at}: items field ${JSON.stringify(n)} is neither a standard item field nor declared in the entities file`),
  ];
}

/** Avro's full name: a dotted name is already full; otherwise namespace.name, or the bare name. */
function fullNameOf(name: unknown, namespace: unknown): string | undefined {
  if (typeof name !== 'string') return undefined;
  if (name.includes('.') || typeof namespace !== 'string' || namespace === '') return name;
  return `${namespace}.${name}`;
}
