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
 * problem at once, like parseTopology: the shape of each field (entity-file-schema.ts), then
 * what relates fields to each other (entity-file-checks.ts). What needs the database (the
 * columns exist with compatible types, the values fit, the indexes exist) is
 * db/entity-schema-check.ts's.
 */
import { ConfigError } from './errors';
import { deepFreeze } from './deep-freeze';
import { jsonDocument } from './json-document';
import { parseDurationMs } from './duration';
import {
  type Archive,
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
  type Transition,
} from './entity-catalogue';
import {
  FileSchema,
  archiveTableOf,
  expandTables,
  rawLocations,
  type RawArchive,
  type RawAssignment,
  type RawEntity,
  type RawFile,
  type RawReminders,
} from './entity-file-schema';
import { crossFieldProblems, type Path } from './entity-file-checks';

export { IDENTIFIER, MAX_REMINDERS, expandTables } from './entity-file-schema';

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

function locationsOf(e: RawEntity): Location[] {
  return rawLocations(e).flatMap((loc) =>
    (expandTables(loc.table) as string[]).map((table) => ({ database: loc.database, table, key: `${loc.database}.${table}` })),
  );
}

function build(file: RawFile, source: string): EntityCatalogue {
  const entities: Entity[] = file.entities.map((e) => entity(e, locationsOf(e)));
  const transitions = entities.flatMap((e) => e.transitions);
  const events = transitions.flatMap((t) => [
    t.event,
    ...(t.reminders?.event ? [t.reminders.event] : []),
    ...(t.reminders?.digest ? [t.reminders.digest.event] : []),
  ]);
  return { entities, transitions, events, source };
}

/** One entity of the file; `locations`: its tables, a set expanded (locationsOf). */
function entity(e: RawEntity, locations: Location[]): Entity {
  return {
    name: e.name,
    table: e.table ?? e.locations!.map((l) => `${l.database}.${l.table}`).join(', '),
    locations,
    databases: [...new Set(rawLocations(e).map((l) => l.database))],
    idColumn: e.id,
    latenessBudgetMs: e.latenessBudgetSeconds * 1_000,
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
    archive: e.archive === undefined ? null : archive(e.archive, locations),
  };
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

function archive(a: RawArchive, hot: readonly Location[]): Archive {
  return {
    finalStates: a.finalStates,
    since: { column: a.since.column, kind: a.since.kind as DueKind },
    afterMs: parseDurationMs(a.after) as number,
    budgetMs: parseDurationMs(a.budget) as number,
    index: a.index,
    tables: hot.map((h) => {
      const table = archiveTableOf(a.table, h.table);
      return { hot: h, archive: { database: h.database, table, key: `${h.database}.${table}` } };
    }),
  };
}

function assignments(set: Readonly<Record<string, RawAssignment>>): Assignment[] {
  return Object.entries(set).map(([column, a]): Assignment => {
    if ('value' in a) return { kind: 'value', column, value: a.value };
    if ('now' in a) return { kind: 'now', column, unit: a.now };
    return { kind: 'increment', column, by: a.increment };
  });
}
