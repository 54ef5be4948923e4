/**
 * The Avro record of an event whose entities-file entry names no schema file, derived from the
 * catalogue and the table's column types (information_schema, read at start).
 *
 * Deterministic: the same catalogue and columns give the same text, so registering it again on
 * every start returns the same id, and the subject's BACKWARD check always passes (a schema is
 * compatible with itself). A column that changes type changes the schema; the registry then
 * decides, as for a hand-written change (schemas/CHANGELOG.md).
 *
 * Fields, in order: event_key, event_type, <idField>, from_status, to_status, due_at,
 * occurred_at, path (core/event-catalogue.ts), then the declared fields. Types follow what the
 * payload carries (core/events.ts, expire/row-values.ts):
 *   integer types             long — a plain long, which the events' clients read and write as
 *                             exact-long.ts (a BIGINT is a decimal string in the payload; one above
 *                             2^63-1 cannot be an Avro long and is poison, as an id is)
 *   decimal                   string: the exact decimal text (a double would round it)
 *   char/varchar/text/enum/set string
 * DATE and BIT are not carried yet (core/entity-schema-check.ts refuses them as event fields).
 *   datetime, timestamp       long timestamp-millis (the payload's epoch milliseconds, UTC)
 *   double, float             double
 *   an effect field           boolean
 *   a nullable column         ["null", T] with default null
 *   the status                string, or for an integer status int (long when the column is
 *                             wider than an Avro int: INT UNSIGNED, BIGINT)
 */
import type { ColumnInfo } from '../core/column-info';
import type { Entity, EventSpec, PayloadField, Transition } from '../core/entity-catalogue';
import { ConfigError } from '../core/errors';
import { DIGEST_PART_ITEMS } from '../core/events';

/** What derivation reads of a column (a ColumnInfo from information_schema is one). */
export type DerivableColumn = Pick<ColumnInfo, 'dataType' | 'columnType' | 'nullable'>;
/** A table's columns by name. */
export type DerivableColumns = ReadonlyMap<string, DerivableColumn>;

type Timestamp = Readonly<{ type: 'long'; logicalType: 'timestamp-millis' }>;
export type AvroFieldType =
  | 'string'
  | 'long'
  | 'int'
  | 'double'
  | 'boolean'
  | Timestamp
  | readonly ['null', 'string' | 'long' | 'double' | Timestamp]
  | Readonly<{ type: 'array'; items: AvroRecord }>;
export type AvroField = Readonly<{ name: string; type: AvroFieldType; default?: null | number; doc: string }>;
export type AvroRecord = Readonly<{ type: 'record'; name: string; namespace?: string; doc: string; fields: readonly AvroField[] }>;

/** A column no Avro type is mapped to, or one the table lacks: named, with every such column. */
export class DerivedSchemaError extends ConfigError {
  constructor(eventType: string, problems: string[]) {
    super(`cannot derive the Avro schema of ${eventType}: ${problems.join('; ')}`, { problems: problems.map((p) => `${eventType}: ${p}`) });
  }
}

const TIMESTAMP: Timestamp = { type: 'long', logicalType: 'timestamp-millis' };
const LONG_TYPES = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint']);
const STRING_TYPES = new Set(['decimal', 'char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'enum', 'set']);
const DOUBLE_TYPES = new Set(['double', 'float']);
const TIMESTAMP_TYPES = new Set(['datetime', 'timestamp']);
/** Integer types whose every value, signed or unsigned, fits an Avro int (32-bit signed). */
const INT_SIZED = new Set(['tinyint', 'smallint', 'mediumint']);

/** The Avro type of a column's value in the payload, or undefined when none is mapped. */
export function avroTypeOfColumn(column: DerivableColumn): AvroFieldType | undefined {
  const base = baseType(column.dataType);
  if (base === undefined) return undefined;
  return column.nullable ? ['null', base] : base;
}

function baseType(dataType: string): 'string' | 'long' | 'double' | Timestamp | undefined {
  if (LONG_TYPES.has(dataType)) return 'long';
  if (STRING_TYPES.has(dataType)) return 'string';
  if (DOUBLE_TYPES.has(dataType)) return 'double';
  if (TIMESTAMP_TYPES.has(dataType)) return TIMESTAMP;
  return undefined;
}

/**
 * The record of `spec`, emitted by a transition of `entity`, whose table has `columns`. Throws
 * DerivedSchemaError naming every declared column that is missing or has no Avro mapping.
 */
export function deriveEventSchema(spec: EventSpec, entity: Entity, columns: DerivableColumns): AvroRecord {
  const transition = entity.transitions.find((t) => t.name === spec.transition);
  if (transition === undefined || entity.name !== spec.entity) throw new RangeError(`${spec.type} is not emitted by a transition of '${entity.name}'`);
  if (spec.kind !== 'transition') return deriveReminderSchema(spec, entity, transition, columns);
  const problems: string[] = [];
  const statusType = statusAvroType(entity, columns.get(entity.status.column), problems);
  const declared = spec.fields.map((f) => declaredField(f, entity, transition, columns, problems));
  if (problems.length > 0) throw new DerivedSchemaError(spec.type, problems);
  const dot = spec.avroName.lastIndexOf('.');
  const name = spec.avroName.slice(dot + 1);
  const fields: AvroField[] = [
    {
      name: 'event_key',
      type: 'string',
      doc: `Deduplication key, ${entity.name}-${transition.name}-<${spec.idField}>-<due_at ms>-<occurred_at ms>: the same on every redelivery of this transition, another for every other transition of the row.`,
    },
    { name: 'event_type', type: 'string', doc: `Always ${spec.type}.` },
    {
      name: spec.idField,
      type: 'long',
      doc: `The ${entity.name} that transitioned (${entity.table}.${entity.idColumn}; also the message key, as a decimal string).`,
    },
    { name: 'from_status', type: statusType, doc: `Status before the transition: ${transition.from.map(String).join(' or ')}.` },
    { name: 'to_status', type: statusType, doc: `Status after the transition: ${String(transition.to)}.` },
    { name: 'due_at', type: TIMESTAMP, doc: `When the ${entity.name} was due (its ${transition.due.column}), UTC epoch milliseconds.` },
    { name: 'occurred_at', type: TIMESTAMP, doc: 'When the transition committed, by the database clock; never before due_at. UTC epoch milliseconds.' },
    { name: 'path', type: 'string', doc: 'Which path performed the transition: stream (on time), scanner (compensation) or replay.' },
    ...declared.filter((f): f is AvroField => f !== undefined),
  ];
  // Key order fixed here (type, name, namespace, doc, fields): the text is the registry's identity of the schema.
  return {
    type: 'record',
    name,
    ...(dot > 0 && { namespace: spec.avroName.slice(0, dot) }),
    doc: `${spec.summary} Published once per transition; on redelivery drop duplicates by event_key.`,
    fields,
  };
}

/** A reminder's record, or a digest's with its items (core/event-catalogue.ts lists their fields). */
function deriveReminderSchema(spec: EventSpec, entity: Entity, transition: Transition, columns: DerivableColumns): AvroRecord {
  const problems: string[] = [];
  const declared = spec.fields
    .map((f) => declaredField(f, entity, transition, columns, problems, 'when the reminder was read'))
    .filter((f): f is AvroField => f !== undefined);
  const statusType = spec.kind === 'reminder' ? statusAvroType(entity, columns.get(entity.status.column), problems) : 'string';
  if (problems.length > 0) throw new DerivedSchemaError(spec.type, problems);
  const dot = spec.avroName.lastIndexOf('.');
  const names: RecordNames = { name: spec.avroName.slice(dot + 1), namespace: dot > 0 ? { namespace: spec.avroName.slice(0, dot) } : {} };
  return spec.kind === 'reminder'
    ? reminderRecord(spec, entity, transition, { names, statusType, declared })
    : digestRecord(spec, entity, transition, { names, declared });
}

type RecordNames = Readonly<{ name: string; namespace: { namespace?: string } }>;
type ReminderParts = Readonly<{ names: RecordNames; declared: AvroField[] }>;

/** The fields a reminder and a digest share: the fire point, when it committed, which path sent it. */
function reminderCommonFields(transition: Transition): { before: AvroField; common: AvroField[] } {
  return {
    before: { name: 'remind_before_ms', type: 'long', doc: `The fire point: this many milliseconds before the due time (${transition.due.column}).` },
    common: [
      { name: 'occurred_at', type: TIMESTAMP, doc: 'When the reminder committed, by the database clock; before the due time. UTC epoch milliseconds.' },
      { name: 'path', type: 'string', doc: 'Which path sent it: stream, or replay.' },
    ],
  };
}

function reminderRecord(spec: EventSpec, entity: Entity, transition: Transition, parts: ReminderParts & { statusType: AvroField['type'] }): AvroRecord {
  const { before, common } = reminderCommonFields(transition);
  const fields: AvroField[] = [
    {
      name: 'event_key',
      type: 'string',
      doc: `Deduplication key, ${entity.name}-${transition.name}-remind-<${spec.idField}>-<due_at ms>-<remind_before_ms>: once per row, due time and fire point.`,
    },
    { name: 'event_type', type: 'string', doc: `Always ${spec.type}.` },
    {
      name: spec.idField,
      type: 'long',
      doc: `The ${entity.name} about to become due (${entity.table}.${entity.idColumn}; also the message key, as a decimal string).`,
    },
    { name: 'status', type: parts.statusType, doc: `Its status when the reminder was read: ${transition.from.map(String).join(' or ')}.` },
    { name: 'due_at', type: TIMESTAMP, doc: `When it falls due (its ${transition.due.column}), UTC epoch milliseconds.` },
    before,
    ...common,
    ...parts.declared,
  ];
  return {
    type: 'record',
    name: parts.names.name,
    ...parts.names.namespace,
    doc: `${spec.summary} Published once per row, due time and fire point; drop duplicates by event_key.`,
    fields,
  };
}

function digestRecord(spec: EventSpec, entity: Entity, transition: Transition, parts: ReminderParts): AvroRecord {
  const { before, common } = reminderCommonFields(transition);
  const digest = transition.reminders!.digest!;
  const item: AvroRecord = {
    type: 'record',
    name: `${parts.names.name}Item`,
    ...parts.names.namespace,
    doc: `One ${entity.name} of the digest.`,
    fields: [
      { name: spec.itemIdField ?? 'id', type: 'long', doc: `The ${entity.name} (${entity.table}.${entity.idColumn}).` },
      { name: 'due_at', type: TIMESTAMP, doc: `When it falls due (its ${transition.due.column}), UTC epoch milliseconds.` },
      ...parts.declared,
    ],
  };
  const fields: AvroField[] = [
    {
      name: 'event_key',
      type: 'string',
      doc: `Deduplication key, ${entity.name}-${transition.name}-digest-<${spec.idField}>-<remind_before_ms>-<window_start ms>-<part>: once per user, fire point, window and part.`,
    },
    { name: 'event_type', type: 'string', doc: `Always ${spec.type}.` },
    { name: spec.idField, type: 'long', doc: `The user (${entity.table}.${digest.userColumn}; also the message key, as a decimal string).` },
    before,
    {
      name: 'window_start',
      type: TIMESTAMP,
      doc: 'The start of the window the fire points fall in, and when the digest was due to fire. UTC epoch milliseconds.',
    },
    ...common,
    {
      name: 'items',
      type: { type: 'array', items: item },
      doc: `The user's ${entity.name}s whose fire points fall in the window, by due time then id, as read at occurred_at (this part's share of them).`,
    },
    { name: 'part', type: 'int', default: 1, doc: `Which part of the user's digest this is, from 1: at most ${DIGEST_PART_ITEMS} items a part.` },
    { name: 'parts', type: 'int', default: 1, doc: 'How many parts the digest has.' },
  ];
  return {
    type: 'record',
    name: parts.names.name,
    ...parts.names.namespace,
    doc: `${spec.summary} Published once per user, fire point, window and part; drop duplicates by event_key.`,
    fields,
  };
}

function statusAvroType(entity: Entity, column: DerivableColumn | undefined, problems: string[]): 'string' | 'int' | 'long' {
  if (entity.status.type === 'string') return 'string';
  if (column === undefined) {
    problems.push(`status column ${entity.table}.${entity.status.column} does not exist`);
    return 'int';
  }
  const unsigned = /\bunsigned\b/i.test(column.columnType);
  const fitsInt = INT_SIZED.has(column.dataType) || ((column.dataType === 'int' || column.dataType === 'integer') && !unsigned);
  return fitsInt ? 'int' : 'long';
}

function declaredField(
  f: PayloadField,
  entity: Entity,
  transition: Transition,
  columns: DerivableColumns,
  problems: string[],
  when = 'after the transition',
): AvroField | undefined {
  if (f.source === 'effect') {
    // The entities file checked that the effect exists.
    const fx = transition.effects[f.effect]!;
    const change = `from ${fx.from.map(String).join(' or ')} to ${String(fx.to)}`;
    return { name: f.name, type: 'boolean', doc: `Whether the same transaction moved a ${fx.entity} whose ${fx.column} holds this id ${change}.` };
  }
  const column = columns.get(f.column);
  const at = `field ${f.name}: column ${entity.table}.${f.column}`;
  if (column === undefined) {
    problems.push(`${at} does not exist`);
    return undefined;
  }
  const type = avroTypeOfColumn(column);
  if (type === undefined) {
    problems.push(`${at} is ${column.columnType}, which has no Avro mapping (integer, decimal, character, enum, set, datetime, timestamp, double, float)`);
    return undefined;
  }
  // Not the COLUMN_TYPE: MySQL 8 and MariaDB spell it differently (int vs int(11)), and the doc is part of the schema's text.
  const doc = `The ${entity.table}.${f.column} column ${when}${valueNote(column.dataType)}.`;
  return column.nullable ? { name: f.name, type, default: null, doc: `${doc.slice(0, -1)}; null when the column is NULL.` } : { name: f.name, type, doc };
}

function valueNote(dataType: string): string {
  if (TIMESTAMP_TYPES.has(dataType)) return ', UTC epoch milliseconds';
  if (dataType === 'decimal') return ', as its exact decimal text';
  return '';
}
