/**
 * The entities file's shape (TB_ENTITIES, entities/*.json): the zod schema of every field, with
 * the rules a single field can state (identifiers, names, value ranges, lengths). What relates one
 * field to another (duplicates, status values of the right type, effects, reminders) is
 * entity-file-checks.ts's; building the catalogue is entity-file.ts's.
 *
 * Nothing from the file reaches SQL unquoted: identifiers must match IDENTIFIER (letters,
 * digits, _ and $, as MySQL's unquoted identifiers) and are quoted with backticks besides;
 * values are always bound.
 */
import { z } from 'zod';
import { MAIN_DATABASE } from './entity-catalogue';

/**
 * Plain MySQL identifiers only (no quotes, spaces, dots or operators): 1–64 chars, not all
 * digits. Not `$` either, which MySQL allows: a table name becomes part of a Debezium regular
 * expression (table.include.list, where `$` anchors) and of a Kafka topic name (which has none).
 */
export const IDENTIFIER = /^(?![0-9]+$)[A-Za-z0-9_]{1,64}$/;
// An entity name lands in outbox.entity_type (VARCHAR(16)), an event type in event_type (VARCHAR(32)).
const NAME = /^[a-z][a-z0-9_]{0,15}$/;
const EVENT_TYPE = /^[A-Z][A-Z0-9_]{0,31}$/;
const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const AVRO_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SCHEMA_FILE = /^[a-z0-9][a-z0-9._-]*\.avsc$/;

const lowerName = z.string().regex(NAME, 'lower-case letters, digits and _ (at most 16), starting with a letter');
const identifier = z.string().regex(IDENTIFIER, 'not a plain SQL identifier (letters, digits and _; at most 64)');
// A string status value is bound, never spliced: any Unicode is fine, but not empty or huge.
const statusValue = z.union([
  z.string().min(1).max(255),
  z
    .number()
    .int()
    .min(-(2 ** 31))
    .max(2 ** 32 - 1),
]);
const dueKind = z.enum(['datetime', 'epoch_ms', 'epoch_s']);

const AssignmentSchema = z.union([
  z.object({ value: z.union([z.string().max(1024), z.number().int().refine(Number.isSafeInteger), z.null()]) }).strict(),
  z.object({ now: dueKind }).strict(),
  z.object({ increment: z.number().int().min(1).max(1_000_000) }).strict(),
]);
const SetSchema = z.record(identifier, AssignmentSchema).default({});

const avroField = z.string().regex(AVRO_FIELD, 'not an Avro field name');
const FieldSchema = z.union([
  z.object({ name: avroField, column: identifier }).strict(),
  z.object({ name: avroField, effect: z.number().int().min(0) }).strict(),
]);

// An event's names and its description, shared by the three kinds of event (in this order: the
// order of the fields is the order their problems are named in).
const eventNames = {
  type: z.string().regex(EVENT_TYPE, 'upper-case letters, digits and _ (at most 32)'),
  ceType: z.string().min(1).max(200),
  avroName: z.string().regex(AVRO_NAME, 'not a full Avro name (namespace.Name)'),
};
const eventDescription = {
  schemaFile: z.string().regex(SCHEMA_FILE, 'a file name under schemas/ ending in .avsc').optional(),
  summary: z.string().min(1).max(500),
};
const EventSchema = z.object({ ...eventNames, idField: avroField, ...eventDescription, fields: z.array(FieldSchema).default([]) }).strict();

/**
 * A reminder's event: as a transition's, its fields columns of the row as it is (a reminder
 * changes nothing, so there is no effect to report).
 */
const ReminderEventSchema = EventSchema.extend({ fields: z.array(FieldSchema.options[0]).default([]) }).strict();

/** A digest: keyed by the user; `itemIdField` names the entity id in each listed item. */
const DigestEventSchema = z
  .object({ ...eventNames, userField: avroField, itemIdField: avroField, ...eventDescription, fields: z.array(FieldSchema.options[0]).default([]) })
  .strict();

/** At most this many fire points per transition: each is an entry per row on the rings. */
export const MAX_REMINDERS = 8;

const RemindersSchema = z
  .object({
    before: z.array(z.string().min(1).max(32)).min(1).max(MAX_REMINDERS),
    event: ReminderEventSchema.optional(),
    // `index`: one whose first column is `user`; the digest's read goes through it.
    // `before`: which of the fire points it digests (default: all of them).
    digest: z
      .object({
        before: z.array(z.string().min(1).max(32)).min(1).max(MAX_REMINDERS).optional(),
        user: identifier,
        index: identifier,
        window: z.string().min(1).max(32),
        event: DigestEventSchema,
      })
      .strict()
      .optional(),
  })
  .strict();

const EffectSchema = z
  .object({
    entity: lowerName,
    column: identifier,
    index: identifier,
    from: z.array(statusValue).min(1),
    to: statusValue,
    set: SetSchema,
  })
  .strict();

const TransitionSchema = z
  .object({
    name: lowerName,
    from: z.array(statusValue).min(1),
    to: statusValue,
    due: z.object({ column: identifier, kind: dueKind }).strict(),
    index: identifier,
    set: SetSchema,
    effects: z.array(EffectSchema).default([]),
    event: EventSchema,
    reminders: RemindersSchema.optional(),
  })
  .strict();

/**
 * A table, or a numbered set of tables: `coupon_{00..63}` is coupon_00 … coupon_63 (the bounds'
 * digits give the width). Expanded and each name checked against IDENTIFIER in crossFieldProblems.
 */
export const TABLE_SET = /^([A-Za-z0-9_]*)\{([0-9]{1,4})\.\.([0-9]{1,4})\}([A-Za-z0-9_]*)$/;
const MAX_TABLES = 1024;
const tableText = z
  .string()
  .refine(
    (s) => IDENTIFIER.test(s) || TABLE_SET.test(s),
    'not a plain SQL identifier (letters, digits and _; at most 64), nor a numbered set such as coupon_{00..63}',
  );
const databaseName = z.string().regex(NAME, 'a database connection name: lower-case letters, digits and _ (at most 16); main is TB_DB_*');
const LocationSchema = z.object({ database: databaseName, table: tableText }).strict();

/**
 * Where an entity's rows go once they are long past their last transition (issue 44, the seeds'
 * archive): rows in one of `finalStates` whose `since` column is older than `after` move to
 * `table` on the same database, paged through `index` (status, since, id). `table` is a name, or
 * a template with `{table}` (one archive per hot table: `{table}_archive`). `budget`: the time a
 * backlog may take to move, the mover being the database's lowest-priority work.
 */
const ArchiveSchema = z
  .object({
    finalStates: z.array(statusValue).min(1),
    since: z.object({ column: identifier, kind: dueKind }).strict(),
    after: z.string().min(1).max(32).default('30d'),
    // The name after {table} is replaced is checked (entity-file-checks.ts), not the template's.
    table: z.string().min(1).max(128),
    index: identifier,
    budget: z.string().min(1).max(32).default('6h'),
  })
  .strict();

/** The lateness budget of an entity that declares none: the seeds' P99 < 2 min. */
export const DEFAULT_LATENESS_BUDGET_SECONDS = 120;

const EntitySchema = z
  .object({
    name: lowerName,
    // One of: `table` (a table or a table set on the main database) or `locations` (tables on
    // several databases, each a connection named in TB_DATABASES).
    table: tableText.optional(),
    locations: z.array(LocationSchema).min(1).optional(),
    id: identifier,
    status: z.object({ column: identifier, type: z.enum(['string', 'integer']), values: z.array(statusValue).min(1).optional() }).strict(),
    transitions: z.array(TransitionSchema).min(1, 'an entity needs at least one transition'),
    // How late a transition of this entity may be (core/pacer.ts): pacing never holds a due row
    // longer. Default 120 s, the seeds' P99 < 2 min.
    latenessBudgetSeconds: z.number().int().min(1).max(86_400).default(DEFAULT_LATENESS_BUDGET_SECONDS),
    archive: ArchiveSchema.optional(),
  })
  .strict();

export const FileSchema = z.object({ entities: z.array(EntitySchema).min(1, 'at least one entity') }).strict();

export type RawFile = z.output<typeof FileSchema>;
export type RawEntity = z.output<typeof EntitySchema>;
export type RawTransition = RawEntity['transitions'][number];
export type RawReminders = z.output<typeof RemindersSchema>;
export type RawAssignment = z.output<typeof AssignmentSchema>;
export type RawArchive = z.output<typeof ArchiveSchema>;

/** The archive table of each hot table: `{table}` in the template replaced by the hot table's name. */
export function archiveTableOf(template: string, hotTable: string): string {
  return template.split('{table}').join(hotTable);
}

export type RawLocation = Readonly<{ database: string; table: string }>;

/** The entity's locations as written: `table` is one on the main database. */
export function rawLocations(e: RawEntity): readonly RawLocation[] {
  return e.locations ?? (e.table === undefined ? [] : [{ database: MAIN_DATABASE, table: e.table }]);
}

/** `coupon_{00..63}` → its table names; one plain table → itself; a problem as a string. */
export function expandTables(text: string): string[] | string {
  const m = TABLE_SET.exec(text);
  if (m === null) return [text];
  const [, prefix, lowText, highText, suffix] = m as unknown as [string, string, string, string, string];
  const low = Number(lowText);
  const high = Number(highText);
  if (high < low) return `${text}: the set runs from ${lowText} down to ${highText}`;
  if (high - low + 1 > MAX_TABLES) return `${text}: more than ${MAX_TABLES} tables`;
  // {00..63}: the width of the bounds as written; {0..63}: no padding.
  const width = lowText.length === highText.length ? lowText.length : 0;
  const names = Array.from({ length: high - low + 1 }, (_, k) => `${prefix}${String(low + k).padStart(width, '0')}${suffix}`);
  const bad = names.find((n) => !IDENTIFIER.test(n));
  return bad === undefined ? names : `${text}: '${bad}' is not a plain SQL identifier`;
}
