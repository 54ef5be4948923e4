/**
 * The entities file's cross-field checks: what zod's shape (entity-file-schema.ts) cannot say
 * field by field. Names and tables mapped once, status values of the entity's type and among its
 * values, columns a transition may not assign, events' types and fields unique, effects on
 * another entity in one transaction and without a lock-order cycle, reminders' fire points and
 * digests. Every problem is named with its path, in file order, so that parseEntityFile can list
 * them all at once.
 */
import { standardFieldNames } from './event-catalogue';
import { parseDurationMs } from './duration';
import type { StatusValue } from './entity-catalogue';
import {
  IDENTIFIER,
  TABLE_SET,
  archiveTableOf,
  expandTables,
  rawLocations,
  type RawArchive,
  type RawEntity,
  type RawFile,
  type RawLocation,
  type RawReminders,
  type RawTransition,
} from './entity-file-schema';

export type Path = (string | number)[];
export type Problem = { path: Path; message: string };
type Add = (path: Path, message: string) => void;

/** Every problem of a file that has the right shape, in file order. */
export function crossFieldProblems(file: RawFile): Problem[] {
  const problems: Problem[] = [];
  const add: Add = (path, message) => void problems.push({ path, message });
  const names = entityProblems(file, add);
  const eventTypes = new Set<string>();
  file.entities.forEach((e, i) => {
    const at: Path = ['entities', i];
    valueProblems(e, e.status.values, [...at, 'status', 'values'], add, true);
    const transitionNames = new Set<string>();
    e.transitions.forEach((t, j) => {
      const tp: Path = [...at, 'transitions', j];
      if (transitionNames.has(t.name)) add([...tp, 'name'], `duplicate transition '${t.name}' of '${e.name}'`);
      transitionNames.add(t.name);
      transitionProblems(e, t, tp, eventTypes, add);
      t.effects.forEach((fx, k) => effectProblems(e, fx, names.get(fx.entity), [...tp, 'effects', k], add));
    });
  });
  problems.push(...effectCycleProblems(file));
  file.entities.forEach((e, i) => {
    if (e.archive !== undefined) archiveProblems(file, e, e.archive, ['entities', i, 'archive'], add);
  });
  return problems;
}

/** Entity names and tables, each once; returns the entities by name. */
function entityProblems(file: RawFile, add: Add): Map<string, RawEntity> {
  const names = new Map<string, RawEntity>();
  const tables = new Set<string>();
  file.entities.forEach((e, i) => {
    // The operator's switches name entities and 'scanner' side by side (timebucket ctl).
    if (e.name === 'scanner' || e.name === 'archiver')
      add(['entities', i, 'name'], `'${e.name}' is the ${e.name === 'scanner' ? 'compensation scanner' : 'archiver'}'s switch; name the entity otherwise`);
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
  return names;
}

/** A transition's own fields: its states, due column, assignments, event and reminders. */
function transitionProblems(e: RawEntity, t: RawTransition, tp: Path, eventTypes: Set<string>, add: Add): void {
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
}

function effectProblems(e: RawEntity, fx: RawTransition['effects'][number], other: RawEntity | undefined, fp: Path, add: Add): void {
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

/**
 * An archive's states final (none a from-state of this entity's transitions or of an effect on
 * it: a row timebucket may still move is never archived), its since column neither the id nor the
 * status, its durations positive, and one archive table per hot table that is none of the file's
 * mapped tables.
 */
function archiveProblems(file: RawFile, e: RawEntity, a: RawArchive, ap: Path, add: Add): void {
  valueProblems(e, a.finalStates, [...ap, 'finalStates'], add);
  const moving = new Set<StatusValue>([
    ...e.transitions.flatMap((t) => t.from),
    ...file.entities.flatMap((other) => other.transitions.flatMap((t) => t.effects.filter((fx) => fx.entity === e.name).flatMap((fx) => fx.from))),
  ]);
  a.finalStates.forEach((v, k) => {
    if (moving.has(v))
      add([...ap, 'finalStates', k], `${JSON.stringify(v)} is a from-state of a transition or effect: its rows may still move, never archived`);
  });
  if (new Set(a.finalStates).size !== a.finalStates.length) add([...ap, 'finalStates'], 'a final state is listed twice');
  if (a.since.column === e.id || a.since.column === e.status.column)
    add([...ap, 'since', 'column'], `the since column cannot be the ${a.since.column === e.id ? 'id' : 'status'} column`);
  for (const field of ['after', 'budget'] as const) {
    const ms = parseDurationMs(a[field]);
    if (typeof ms === 'string') add([...ap, field], ms);
    else if (ms <= 0) add([...ap, field], `${JSON.stringify(a[field])}: more than 0`);
  }
  const hot = tablesOf(e);
  if (hot.length > 1 && !a.table.includes('{table}'))
    return add([...ap, 'table'], `'${e.name}' has ${hot.length} tables: write the archive's name with {table} (e.g. {table}_archive), one per hot table`);
  const mapped = new Set(file.entities.flatMap((other) => tablesOf(other).map((t) => `${t.database}.${t.table}`)));
  const seen = new Set<string>();
  for (const h of hot) {
    const table = archiveTableOf(a.table, h.table);
    const key = `${h.database}.${table}`;
    if (!IDENTIFIER.test(table)) add([...ap, 'table'], `'${table}' (for ${h.table}) is not a plain SQL identifier (letters, digits and _; at most 64)`);
    else if (mapped.has(key)) add([...ap, 'table'], `'${key}' is a mapped table: the archive is a table of its own`);
    else if (seen.has(key)) add([...ap, 'table'], `'${key}' is the archive of two tables`);
    seen.add(key);
  }
}

/** An entity's tables, a set expanded (a set that does not expand is entityProblems's to name). */
function tablesOf(e: RawEntity): Array<{ database: string; table: string }> {
  return rawLocations(e).flatMap((loc) => {
    const tables = expandTables(loc.table);
    return typeof tables === 'string' ? [] : tables.map((table) => ({ database: loc.database, table }));
  });
}

function valueProblems(e: RawEntity, values: readonly StatusValue[] | undefined, path: Path, add: Add, declaring = false): void {
  for (const [k, v] of (values ?? []).entries()) {
    if (e.status.type === 'integer' && typeof v !== 'number') add([...path, k], `status of '${e.name}' is an integer; ${JSON.stringify(v)} is not`);
    else if (e.status.type === 'string' && typeof v !== 'string') add([...path, k], `status of '${e.name}' is a string; write ${JSON.stringify(String(v))}`);
    else if (!declaring && e.status.values !== undefined && !e.status.values.includes(v)) {
      add([...path, k], `${JSON.stringify(v)} is not one of the status values of '${e.name}'`);
    }
  }
  if (declaring && values !== undefined && new Set(values).size !== values.length) add(path, 'a status value is listed twice');
}

function setProblems(set: Readonly<Record<string, unknown>>, forbidden: readonly string[], path: Path, add: Add): void {
  for (const column of Object.keys(set)) {
    if (forbidden.includes(column))
      add([...path, column], `the ${column === forbidden[0] ? 'id' : 'status'} column is not assigned here (the status is set by 'to')`);
  }
}

function eventFieldProblems(e: RawEntity, t: RawTransition, tp: Path, add: Add): void {
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

/**
 * Fire points once each and before the due time; every one reminded by event or digest; event
 * types unique and fields not the standard ones; the digest's own checks.
 */
function reminderProblems(e: RawEntity, t: RawTransition, r: RawReminders, rp: Path, eventTypes: Set<string>, add: Add): void {
  const seen = firePointProblems(r.before, rp, add);
  const fields = eventFieldsOf(e, add);
  if (r.event !== undefined) {
    uniqueType(r.event.type, [...rp, 'event', 'type'], eventTypes, add);
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
  if (r.digest !== undefined) digestProblems(e, t, r.digest, seen, digestedMs, rp, eventTypes, add);
}

/** The fire points' durations, each once and more than 0; returns them in ms. */
function firePointProblems(before: readonly string[], rp: Path, add: Add): Set<number> {
  const seen = new Set<number>();
  before.forEach((text, k) => {
    const ms = parseDurationMs(text);
    if (typeof ms === 'string') return add([...rp, 'before', k], ms);
    if (ms <= 0) add([...rp, 'before', k], `${JSON.stringify(text)}: a fire point is some time before the due time`);
    if (seen.has(ms)) add([...rp, 'before', k], `${JSON.stringify(text)}: the same fire point twice`);
    seen.add(ms);
  });
  return seen;
}

function digestProblems(
  e: RawEntity,
  t: RawTransition,
  d: NonNullable<RawReminders['digest']>,
  seen: ReadonlySet<number>,
  digestedMs: ReadonlyArray<number | string>,
  rp: Path,
  eventTypes: Set<string>,
  add: Add,
): void {
  d.before?.forEach((text, k) => {
    const ms = parseDurationMs(text);
    if (typeof ms === 'number' && !seen.has(ms)) add([...rp, 'digest', 'before', k], `${JSON.stringify(text)} is not one of the fire points (before)`);
  });
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
  uniqueType(d.event.type, [...rp, 'digest', 'event', 'type'], eventTypes, add);
  const standard = standardFieldNames({ kind: 'digest', idField: d.event.userField });
  if (standard.includes(d.event.itemIdField) || d.event.itemIdField === 'due_at')
    add([...rp, 'digest', 'event', 'itemIdField'], `'${d.event.itemIdField}' is a standard field`);
  eventFieldsOf(e, add)(d.event, ['due_at', d.event.itemIdField], [...rp, 'digest', 'event']);
}

function uniqueType(type: string, path: Path, eventTypes: Set<string>, add: Add): void {
  if (eventTypes.has(type)) add(path, `event type '${type}' is emitted twice`);
  eventTypes.add(type);
}

/** A reminder's or digest's fields: none twice or a standard one, none the status column. */
function eventFieldsOf(e: RawEntity, add: Add) {
  return (spec: { fields: ReadonlyArray<{ name: string; column: string }> }, standard: readonly string[], path: Path): void => {
    const names = new Set(standard);
    spec.fields.forEach((f, k) => {
      if (names.has(f.name)) add([...path, 'fields', k, 'name'], `field '${f.name}' is declared twice (or is a standard field)`);
      names.add(f.name);
      if (f.column === e.status.column) add([...path, 'fields', k, 'column'], 'the status is carried by the standard fields');
    });
  };
}
