/**
 * The entities file (TB_ENTITIES, entities/*.json) → the entity catalogue, checked once.
 *
 * The file describes a team's own tables: per entity its table, id and status columns (with
 * the status values, typed), and its timed transitions, each with its due column, the
 * assignments it makes, its side effects on another entity and its event. The format, by
 * example, is entities/default.json (timebucket's own demo tables) and README "Point it at
 * your tables".
 *
 * parseEntityFile checks everything that can be checked without a database and names every
 * problem at once, like parseTopology. What needs the database (the columns exist with
 * compatible types, the values fit, the indexes exist) is db/entity-schema-check.ts's.
 *
 * Nothing from the file reaches SQL unquoted: identifiers must match IDENTIFIER (letters,
 * digits, _ and $, as MySQL's unquoted identifiers) and are quoted with backticks besides;
 * values are always bound.
 */
import { z } from 'zod';
import { ConfigError } from './errors';
import { deepFreeze } from './deep-freeze';
import { jsonDocument } from './json-document';
import { standardFieldNames } from './event-catalogue';
import { parseDurationMs } from './duration';
import {
  MAIN_DATABASE,
  type Assignment,
  type DueKind,
  type Effect,
  type Entity,
  type EntityCatalogue,
  type EventKind,
  type EventSpec,
  type Location,
  type PayloadField,
  type Reminders,
  type StatusValue,
  type Transition,
} from './entity-catalogue';

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

const FieldSchema = z.union([
  z.object({ name: z.string().regex(AVRO_FIELD, 'not an Avro field name'), column: identifier }).strict(),
  z.object({ name: z.string().regex(AVRO_FIELD, 'not an Avro field name'), effect: z.number().int().min(0) }).strict(),
]);

const EventSchema = z
  .object({
    type: z.string().regex(EVENT_TYPE, 'upper-case letters, digits and _ (at most 32)'),
    ceType: z.string().min(1).max(200),
    avroName: z.string().regex(AVRO_NAME, 'not a full Avro name (namespace.Name)'),
    idField: z.string().regex(AVRO_FIELD, 'not an Avro field name'),
    schemaFile: z.string().regex(SCHEMA_FILE, 'a file name under schemas/ ending in .avsc').optional(),
    summary: z.string().min(1).max(500),
    fields: z.array(FieldSchema).default([]),
  })
  .strict();

/**
 * A reminder's event: as a transition's, its fields columns of the row as it is (a reminder
 * changes nothing, so there is no effect to report).
 */
const ReminderEventSchema = EventSchema.extend({ fields: z.array(FieldSchema.options[0]).default([]) }).strict();

/** A digest: keyed by the user; `itemIdField` names the entity id in each listed item. */
const DigestEventSchema = z
  .object({
    type: z.string().regex(EVENT_TYPE, 'upper-case letters, digits and _ (at most 32)'),
    ceType: z.string().min(1).max(200),
    avroName: z.string().regex(AVRO_NAME, 'not a full Avro name (namespace.Name)'),
    userField: z.string().regex(AVRO_FIELD, 'not an Avro field name'),
    itemIdField: z.string().regex(AVRO_FIELD, 'not an Avro field name'),
    schemaFile: z.string().regex(SCHEMA_FILE, 'a file name under schemas/ ending in .avsc').optional(),
    summary: z.string().min(1).max(500),
    fields: z.array(FieldSchema.options[0]).default([]),
  })
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
    entity: z.string().regex(NAME, 'lower-case letters, digits and _ (at most 16), starting with a letter'),
    column: identifier,
    index: identifier,
    from: z.array(statusValue).min(1),
    to: statusValue,
    set: SetSchema,
  })
  .strict();

const TransitionSchema = z
  .object({
    name: z.string().regex(NAME, 'lower-case letters, digits and _ (at most 16), starting with a letter'),
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
const TABLE_SET = /^([A-Za-z0-9_]*)\{([0-9]{1,4})\.\.([0-9]{1,4})\}([A-Za-z0-9_]*)$/;
const MAX_TABLES = 1024;
const tableText = z
  .string()
  .refine(
    (s) => IDENTIFIER.test(s) || TABLE_SET.test(s),
    'not a plain SQL identifier (letters, digits and _; at most 64), nor a numbered set such as coupon_{00..63}',
  );
const databaseName = z.string().regex(NAME, 'a database connection name: lower-case letters, digits and _ (at most 16); main is TB_DB_*');
const LocationSchema = z.object({ database: databaseName, table: tableText }).strict();

const EntitySchema = z
  .object({
    name: z.string().regex(NAME, 'lower-case letters, digits and _ (at most 16), starting with a letter'),
    // One of: `table` (a table or a table set on the main database) or `locations` (tables on
    // several databases, each a connection named in TB_DATABASES).
    table: tableText.optional(),
    locations: z.array(LocationSchema).min(1).optional(),
    id: identifier,
    status: z.object({ column: identifier, type: z.enum(['string', 'integer']), values: z.array(statusValue).min(1).optional() }).strict(),
    transitions: z.array(TransitionSchema).min(1, 'an entity needs at least one transition'),
  })
  .strict();

const FileSchema = z.object({ entities: z.array(EntitySchema).min(1, 'at least one entity') }).strict();

type RawFile = z.output<typeof FileSchema>;
type RawEntity = z.output<typeof EntitySchema>;
type Path = (string | number)[];
type Problem = { path: Path; message: string };

/**
 * `json`: the parsed file or its text; `source` names it in messages. Returns the frozen
 * catalogue or throws a ConfigError whose details.problems lists every problem.
 */
export function parseEntityFile(json: unknown, source: string): EntityCatalogue {
  const parsed = FileSchema.safeParse(jsonDocument(json, `invalid entities file ${source}`));
  const problems: string[] = parsed.success ? [] : parsed.error.issues.map((i) => `${pathText(i.path)}: ${i.message}`);
  if (parsed.success) problems.push(...crossFieldProblems(parsed.data).map((p) => `${pathText(p.path)}: ${p.message}`));
  if (!parsed.success || problems.length > 0) {
    throw new ConfigError(`invalid entities file ${source}: ${problems.join('; ')}`, { problems });
  }
  return deepFreeze(build(parsed.data, source));
}

function pathText(path: Path): string {
  return path.length > 0 ? path.join('.') : '(root)';
}

function crossFieldProblems(file: RawFile): Problem[] {
  const problems: Problem[] = [];
  const add = (path: Path, message: string): void => void problems.push({ path, message });
  const names = new Map<string, RawEntity>();
  const tables = new Set<string>();
  const eventTypes = new Set<string>();
  file.entities.forEach((e, i) => {
    // The operator's switches name entities and 'scanner' side by side (timebucket ctl).
    if (e.name === 'scanner') add(['entities', i, 'name'], "'scanner' is the compensation scanner's switch; name the entity otherwise");
    if (names.has(e.name)) add(['entities', i, 'name'], `duplicate entity '${e.name}'`);
    names.set(e.name, e);
    if ((e.table === undefined) === (e.locations === undefined)) {
      add(['entities', i], 'give either table (on the main database) or locations (tables on named databases)');
      return;
    }
    for (const [k, loc] of rawLocations(e).entries()) {
      const path: Path = e.locations === undefined ? ['entities', i, 'table'] : ['entities', i, 'locations', k, 'table'];
      const expanded = expandTables(loc.table);
      if (typeof expanded === 'string') {
        add(path, expanded);
        continue;
      }
      for (const table of expanded) {
        const key = `${loc.database}.${table}`;
        if (tables.has(key)) add(path, `table '${key}' is mapped twice`);
        tables.add(key);
      }
    }
  });
  file.entities.forEach((e, i) => {
    const at: Path = ['entities', i];
    valueProblems(e, e.status.values, [...at, 'status', 'values'], add, true);
    const transitionNames = new Set<string>();
    e.transitions.forEach((t, j) => {
      const tp: Path = [...at, 'transitions', j];
      if (transitionNames.has(t.name)) add([...tp, 'name'], `duplicate transition '${t.name}' of '${e.name}'`);
      transitionNames.add(t.name);
      valueProblems(e, t.from, [...tp, 'from'], add);
      valueProblems(e, [t.to], [...tp, 'to'], add);
      if (t.from.some((v) => v === t.to)) add([...tp, 'to'], `'${String(t.to)}' is also a from-state: the transition would never end`);
      if (t.due.column === e.status.column || t.due.column === e.id)
        add([...tp, 'due', 'column'], `the due column cannot be the ${t.due.column === e.id ? 'id' : 'status'} column`);
      setProblems(t.set, [e.id, e.status.column], [...tp, 'set'], add);
      if (eventTypes.has(t.event.type)) add([...tp, 'event', 'type'], `event type '${t.event.type}' is emitted by two transitions`);
      eventTypes.add(t.event.type);
      eventFieldProblems(e, t, tp, add);
      if (t.reminders !== undefined) reminderProblems(e, t, t.reminders, [...tp, 'reminders'], eventTypes, add);
      t.effects.forEach((fx, k) => {
        const fp: Path = [...tp, 'effects', k];
        const other = names.get(fx.entity);
        if (other === undefined) {
          add([...fp, 'entity'], `unknown entity '${fx.entity}'`);
          return;
        }
        if (other.name === e.name) add([...fp, 'entity'], 'an effect changes another entity, not the transition’s own');
        // One transaction holds both entities' rows: one table each, on one database.
        const here = rawLocations(e);
        const there = rawLocations(other);
        const single = (ls: readonly RawLocation[]) => ls.length === 1 && TABLE_SET.exec(ls[0]!.table) === null;
        if (!single(here) || !single(there) || here[0]!.database !== there[0]!.database) {
          add(
            [...fp, 'entity'],
            'an effect needs both entities in one table each, on one database (one transaction holds both rows); a table set or a second database cannot be mapped here yet',
          );
        }
        valueProblems(other, fx.from, [...fp, 'from'], add);
        valueProblems(other, [fx.to], [...fp, 'to'], add);
        setProblems(fx.set, [other.id, other.status.column], [...fp, 'set'], add);
      });
    });
  });
  problems.push(...effectCycleProblems(file));
  return problems;
}

/**
 * Effects lock the other entity's rows after the transition's own: one lock order per pair of
 * entities. A cycle (A's transition changes B's rows and B's changes A's) would take the two
 * tables' locks in both orders, and batches of the two would deadlock each other.
 */
function effectCycleProblems(file: RawFile): Problem[] {
  const edges = new Map<string, Set<string>>();
  for (const e of file.entities)
    for (const t of e.transitions) for (const fx of t.effects) (edges.get(e.name) ?? edges.set(e.name, new Set()).get(e.name)!).add(fx.entity);
  const problems: Problem[] = [];
  const reported = new Set<string>();
  const walk = (start: string, at: string, path: string[]): void => {
    for (const next of edges.get(at) ?? []) {
      if (next === start) {
        const cycle = [...path, next];
        const key = [...new Set(cycle)].sort().join('>');
        if (!reported.has(key))
          problems.push({
            path: ['entities'],
            message: `effects form a cycle (${cycle.join(' → ')}): their locks would be taken in both orders and batches would deadlock`,
          });
        reported.add(key);
      } else if (!path.includes(next)) {
        walk(start, next, [...path, next]);
      }
    }
  };
  for (const name of edges.keys()) walk(name, name, [name]);
  return problems;
}

function valueProblems(e: RawEntity, values: readonly StatusValue[] | undefined, path: Path, add: (p: Path, m: string) => void, declaring = false): void {
  for (const [k, v] of (values ?? []).entries()) {
    if (e.status.type === 'integer' && typeof v !== 'number') add([...path, k], `status of '${e.name}' is an integer; ${JSON.stringify(v)} is not`);
    else if (e.status.type === 'string' && typeof v !== 'string') add([...path, k], `status of '${e.name}' is a string; write ${JSON.stringify(String(v))}`);
    else if (!declaring && e.status.values !== undefined && !e.status.values.includes(v)) {
      add([...path, k], `${JSON.stringify(v)} is not one of the status values of '${e.name}'`);
    }
  }
  if (declaring && values !== undefined && new Set(values).size !== values.length) add(path, 'a status value is listed twice');
}

function setProblems(set: Readonly<Record<string, unknown>>, forbidden: readonly string[], path: Path, add: (p: Path, m: string) => void): void {
  for (const column of Object.keys(set)) {
    if (forbidden.includes(column))
      add([...path, column], `the ${column === forbidden[0] ? 'id' : 'status'} column is not assigned here (the status is set by 'to')`);
  }
}

function eventFieldProblems(e: RawEntity, t: RawEntity['transitions'][number], tp: Path, add: (p: Path, m: string) => void): void {
  // The fields every event carries, the id field among them: the id field may not be one of the
  // others, and no declared field may reuse any.
  const standard = standardFieldNames({ kind: 'transition', idField: t.event.idField });
  const seen = new Set<string>(standard);
  if (standard.filter((f) => f === t.event.idField).length > 1) add([...tp, 'event', 'idField'], `'${t.event.idField}' is a standard field`);
  t.event.fields.forEach((f, k) => {
    if (seen.has(f.name)) add([...tp, 'event', 'fields', k, 'name'], `field '${f.name}' is declared twice (or is a standard field)`);
    seen.add(f.name);
    if ('effect' in f && t.effects[f.effect] === undefined) add([...tp, 'event', 'fields', k, 'effect'], `no effect ${f.effect} on this transition`);
    if ('column' in f && f.column === e.status.column) add([...tp, 'event', 'fields', k, 'column'], 'the status is carried by from_status and to_status');
  });
}

type RawReminders = z.output<typeof RemindersSchema>;

function reminderProblems(
  e: RawEntity,
  t: RawEntity['transitions'][number],
  r: RawReminders,
  rp: Path,
  eventTypes: Set<string>,
  add: (p: Path, m: string) => void,
): void {
  const seen = new Set<number>();
  r.before.forEach((text, k) => {
    const ms = parseDurationMs(text);
    if (typeof ms === 'string') return add([...rp, 'before', k], ms);
    if (ms <= 0) add([...rp, 'before', k], `${JSON.stringify(text)}: a fire point is some time before the due time`);
    if (seen.has(ms)) add([...rp, 'before', k], `${JSON.stringify(text)}: the same fire point twice`);
    seen.add(ms);
  });
  const typed = (type: string, path: Path): void => {
    if (eventTypes.has(type)) add(path, `event type '${type}' is emitted twice`);
    eventTypes.add(type);
  };
  const fields = (spec: { fields: ReadonlyArray<{ name: string; column: string }> }, standard: readonly string[], path: Path): void => {
    const names = new Set(standard);
    spec.fields.forEach((f, k) => {
      if (names.has(f.name)) add([...path, 'fields', k, 'name'], `field '${f.name}' is declared twice (or is a standard field)`);
      names.add(f.name);
      if (f.column === e.status.column) add([...path, 'fields', k, 'column'], 'the status is carried by the standard fields');
    });
  };
  if (r.event !== undefined) {
    typed(r.event.type, [...rp, 'event', 'type']);
    fields(r.event, standardFieldNames({ kind: 'reminder', idField: r.event.idField }), [...rp, 'event']);
  }
  const digestedMs = r.digest === undefined ? [] : (r.digest.before ?? r.before).map(parseDurationMs);
  const plain = [...seen].filter((ms) => !digestedMs.includes(ms));
  if (plain.length > 0 && r.event === undefined)
    add(
      rp,
      r.digest === undefined
        ? 'give event (one per row and fire point), digest (one per user and window), or both'
        : 'the fire points the digest does not list need event (one per row and fire point)',
    );
  if (plain.length === 0 && r.event !== undefined && r.digest !== undefined)
    add([...rp, 'event'], 'the digest lists every fire point: event would never be sent');
  if (r.digest?.before !== undefined) {
    r.digest.before.forEach((text, k) => {
      const ms = parseDurationMs(text);
      if (typeof ms === 'number' && !seen.has(ms)) add([...rp, 'digest', 'before', k], `${JSON.stringify(text)} is not one of the fire points (before)`);
    });
  }
  if (r.digest !== undefined) {
    const d = r.digest;
    const window = parseDurationMs(d.window);
    // A digest fires at its window's start: up to a window before a fire point, so a window wider
    // than the nearest digested fire point could remind before "1 day before" means anything.
    const nearest = Math.min(...digestedMs.filter((ms): ms is number => typeof ms === 'number'));
    if (typeof window === 'string') add([...rp, 'digest', 'window'], window);
    else if (window <= 0 || window > nearest)
      add([...rp, 'digest', 'window'], `${JSON.stringify(d.window)}: a window is more than 0 and no longer than the nearest fire point it digests`);
    if (d.user === e.id || d.user === e.status.column || d.user === t.due.column)
      add([...rp, 'digest', 'user'], 'the user column is none of the id, status and due columns');
    // One read per user finds the digest's rows, in one transaction with its outbox row.
    if (rawLocations(e).length !== 1 || TABLE_SET.test(rawLocations(e)[0]!.table))
      add(
        [...rp, 'digest'],
        "a digest needs the entity in one table (a user's rows spread over tables or databases cannot be read in one transaction yet); use event instead",
      );
    typed(d.event.type, [...rp, 'digest', 'event', 'type']);
    const standard = standardFieldNames({ kind: 'digest', idField: d.event.userField });
    if (standard.includes(d.event.itemIdField) || d.event.itemIdField === 'due_at')
      add([...rp, 'digest', 'event', 'itemIdField'], `'${d.event.itemIdField}' is a standard field`);
    fields(d.event, ['due_at', d.event.itemIdField], [...rp, 'digest', 'event']);
  }
}

type RawLocation = Readonly<{ database: string; table: string }>;

/** The entity's locations as written: `table` is one on the main database. */
function rawLocations(e: RawEntity): readonly RawLocation[] {
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

function locationsOf(e: RawEntity): Location[] {
  return rawLocations(e).flatMap((loc) =>
    (expandTables(loc.table) as string[]).map((table) => ({ database: loc.database, table, key: `${loc.database}.${table}` })),
  );
}

function build(file: RawFile, source: string): EntityCatalogue {
  const entities: Entity[] = file.entities.map((e) => ({
    name: e.name,
    table: e.table ?? e.locations!.map((l) => `${l.database}.${l.table}`).join(', '),
    locations: locationsOf(e),
    databases: [...new Set(rawLocations(e).map((l) => l.database))],
    idColumn: e.id,
    status: { column: e.status.column, type: e.status.type, values: e.status.values ?? null },
    transitions: e.transitions.map((t): Transition => {
      const event = eventSpec('transition', t.event, e.name, t.name);
      return {
        name: t.name,
        entity: e.name,
        ref: `${e.name}.${t.name}`,
        from: t.from,
        to: t.to,
        due: { column: t.due.column, kind: t.due.kind as DueKind },
        index: t.index,
        set: assignments(t.set),
        effects: t.effects.map((fx): Effect => ({ entity: fx.entity, column: fx.column, from: fx.from, to: fx.to, set: assignments(fx.set), index: fx.index })),
        event,
        reminders: t.reminders === undefined ? null : reminders(t.reminders, e.name, t.name),
      };
    }),
  }));
  const transitions = entities.flatMap((e) => e.transitions);
  const events = transitions.flatMap((t) => [
    t.event,
    ...(t.reminders?.event ? [t.reminders.event] : []),
    ...(t.reminders?.digest ? [t.reminders.digest.event] : []),
  ]);
  return { entities, transitions, events, source };
}

type RawEvent = Readonly<{
  type: string;
  ceType: string;
  avroName: string;
  summary: string;
  schemaFile?: string | undefined;
  fields: ReadonlyArray<{ name: string; column: string } | { name: string; effect: number }>;
}>;

function eventSpec(kind: EventKind, raw: RawEvent & Readonly<{ idField: string; itemIdField?: string }>, entity: string, transition: string): EventSpec {
  return {
    kind,
    type: raw.type,
    ceType: raw.ceType,
    avroName: raw.avroName,
    idField: raw.idField,
    itemIdField: raw.itemIdField ?? null,
    summary: raw.summary,
    schemaFile: raw.schemaFile ?? null,
    fields: raw.fields.map((f): PayloadField =>
      'column' in f ? { name: f.name, source: 'column', column: f.column } : { name: f.name, source: 'effect', effect: f.effect },
    ),
    entity,
    transition,
  };
}

/** Fire points largest first: the order a row meets them in. */
function reminders(r: RawReminders, entity: string, transition: string): Reminders {
  const ms = (list: readonly string[]) => list.map((b) => parseDurationMs(b) as number).sort((a, b) => b - a);
  const beforeMs = ms(r.before);
  const event = r.event === undefined ? null : eventSpec('reminder', r.event, entity, transition);
  const d = r.digest;
  if (d === undefined) return { beforeMs, event, digest: null };
  const digestEvent = eventSpec('digest', { ...d.event, idField: d.event.userField }, entity, transition);
  return {
    beforeMs,
    event,
    digest: { beforeMs: ms(d.before ?? r.before), userColumn: d.user, index: d.index, windowMs: parseDurationMs(d.window) as number, event: digestEvent },
  };
}

function assignments(set: Readonly<Record<string, z.output<typeof AssignmentSchema>>>): Assignment[] {
  return Object.entries(set).map(([column, a]): Assignment => {
    if ('value' in a) return { kind: 'value', column, value: a.value };
    if ('now' in a) return { kind: 'now', column, unit: a.now };
    return { kind: 'increment', column, by: a.increment };
  });
}
