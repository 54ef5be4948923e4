/**
 * The entities file against the database it describes: every mapped table and column exists
 * with a type its use needs, every declared value fits its column, and the indexes the SQL
 * forces exist. Run at start (a service that would fail on its first batch must not start) and
 * by `timebucket check`. Each problem names its fix (a CREATE INDEX to run, the type wanted).
 *
 * Pure: the schema comes in as data (db/sql/read-table-schema.ts reads it from information_schema,
 * the same on MySQL 8 and MariaDB), keyed by location (`<database>.<table>`, entity-catalogue.ts):
 * every table of a table set, on every database, is checked on its own. `schemaNames` gives each
 * database's schema name for the messages and the CREATE INDEX to run.
 */
import type { ColumnInfo, SchemaInfo, TableInfo } from './column-info';
import { archiveProblems } from './archive-schema-check';
import { assignmentProblems, CHARACTER, comparableType, INTEGER, keysetIndexProblems, PAYLOAD, timeColumnProblems, valueProblems } from './column-value-checks';
import { qualified, type Entity, type EntityCatalogue, type Location, type Transition } from './entity-catalogue';

/** `only`: check the tables of that database alone (`timebucket check` reads one database at a time). */
export function entitySchemaProblems(catalogue: EntityCatalogue, schema: SchemaInfo, schemaNames: Readonly<Record<string, string>>, only?: string): string[] {
  const problems: string[] = [];
  for (const entity of catalogue.entities) {
    for (const location of entity.locations)
      if (only === undefined || location.database === only) problems.push(...locationProblems(catalogue, schema, entity, location, schemaNames));
    if (only === undefined) problems.push(...setProblems(schema, entity, schemaNames));
  }
  return problems;
}

function locationProblems(
  catalogue: EntityCatalogue,
  schema: SchemaInfo,
  entity: Entity,
  location: Location,
  schemaNames: Readonly<Record<string, string>>,
): string[] {
  const problems: string[] = [];
  const where = qualified(location, schemaNames);
  const table = schema.get(location.key);
  if (table === undefined) return [`${entity.name}: table ${where} does not exist`];
  const at = `${entity.name} (${where})`;
  const column = (name: string, why: string): ColumnInfo | undefined => {
    const c = table.columns.get(name);
    if (c === undefined) problems.push(`${at}: column ${name} (${why}) does not exist`);
    return c;
  };
  const id = column(entity.idColumn, 'the id');
  if (id !== undefined && !INTEGER.has(id.dataType)) problems.push(`${at}: id column ${id.name} is ${id.columnType}; ids must be an integer type (BIGINT)`);
  if (id !== undefined && !isPrimaryKey(table, id.name))
    problems.push(`${at}: id column ${id.name} is not the table's primary key; batches are addressed by primary key`);
  const status = column(entity.status.column, 'the status');
  if (status !== undefined) {
    problems.push(...statusTypeProblems(at, entity, status));
    for (const v of entity.status.values ?? []) problems.push(...valueProblems(at, status, v));
  }
  for (const t of entity.transitions) problems.push(...transitionProblems(catalogue, schema, entity, table, t, location, schemaNames));
  if (entity.archive !== null) problems.push(...archiveProblems(schema, entity, entity.archive, location, table, schemaNames));
  return problems;
}

/**
 * The tables of a set must agree on every column timebucket uses: the statements are the same
 * for each, and an event's schema is derived from the first table, so a column typed otherwise
 * in another would not encode (its events would be dead-lettered).
 */
function setProblems(schema: SchemaInfo, entity: Entity, schemaNames: Readonly<Record<string, string>>): string[] {
  const [first, ...rest] = entity.locations;
  const reference = first === undefined ? undefined : schema.get(first.key);
  if (first === undefined || reference === undefined) return [];
  const used = new Set([entity.idColumn, entity.status.column]);
  for (const t of entity.transitions) {
    used.add(t.due.column);
    for (const a of t.set) used.add(a.column);
    for (const f of t.event.fields) if (f.source === 'column') used.add(f.column);
  }
  const problems: string[] = [];
  for (const location of rest) {
    const table = schema.get(location.key);
    if (table === undefined) continue; // reported with the location
    for (const name of used) {
      const a = reference.columns.get(name);
      const b = table.columns.get(name);
      if (a === undefined || b === undefined) continue;
      if (comparableType(a) !== comparableType(b) || a.nullable !== b.nullable) {
        const shape = (c: ColumnInfo) => `${c.columnType}${c.nullable ? ' NULL' : ' NOT NULL'}`;
        problems.push(
          `${entity.name} (${qualified(location, schemaNames)}): column ${name} is ${shape(b)} but ${shape(a)} in ${qualified(first, schemaNames)}; the tables of a set must agree`,
        );
      }
    }
  }
  return problems;
}

/** A reminder's event columns exist and can be carried; a digest's user column holds integer ids, and its index starts with it. */
function reminderProblems(at: string, name: string, table: TableInfo, entity: Entity, t: Transition): string[] {
  const r = t.reminders;
  if (r === null) return [];
  const problems: string[] = [];
  for (const spec of [r.event, r.digest?.event]) {
    for (const f of spec?.fields ?? []) {
      if (f.source !== 'column') continue;
      const c = table.columns.get(f.column);
      if (c === undefined) problems.push(`${at}: event ${spec!.type} field ${f.name}: column ${f.column} does not exist`);
      else if (!PAYLOAD.has(c.dataType))
        problems.push(`${at}: event ${spec!.type} field ${f.name}: column ${f.column} is ${c.columnType}, which an event cannot carry`);
    }
  }
  if (r.digest !== null) {
    const { userColumn, index } = r.digest;
    const user = table.columns.get(userColumn);
    if (user === undefined) problems.push(`${at}: digest user column ${userColumn} does not exist`);
    else if (!INTEGER.has(user.dataType)) problems.push(`${at}: digest user column ${userColumn} is ${user.columnType}; it must hold integer user ids`);
    const found = table.indexes.find((i) => i.name === index);
    if (found === undefined || found.columns[0] !== userColumn) {
      problems.push(
        `${at}: index ${index} ${found === undefined ? 'does not exist' : `starts with ${found.columns[0]}`}; the digest reads a user's rows through it: CREATE INDEX ${index} ON ${name} (${userColumn}, ${entity.status.column}, ${t.due.column})`,
      );
    }
  }
  return problems;
}

function transitionProblems(
  catalogue: EntityCatalogue,
  schema: SchemaInfo,
  entity: Entity,
  table: TableInfo,
  t: Transition,
  location: Location,
  schemaNames: Readonly<Record<string, string>>,
): string[] {
  const name = qualified(location, schemaNames);
  const at = `${t.ref} (${name})`;
  const status = table.columns.get(entity.status.column);
  return [
    ...(status === undefined ? [] : [...t.from, t.to].flatMap((v) => valueProblems(at, status, v))),
    ...timeColumnProblems(at, table, t.due.column, t.due.kind, 'due'),
    ...scanIndexProblems(at, name, table, entity, t),
    ...assignmentProblems(at, table, t.set),
    ...eventFieldProblems(at, table, t),
    ...reminderProblems(at, name, table, entity, t),
    ...[...t.effects.entries()].flatMap(([k, fx]) => effectProblems({ catalogue, schema, schemaNames }, `${at} effect ${k}`, entity, fx)),
  ];
}

/** The scanner's and backfill's index: (status, due, id). */
function scanIndexProblems(at: string, name: string, table: TableInfo, entity: Entity, t: Transition): string[] {
  return keysetIndexProblems(
    at,
    name,
    table,
    t.index,
    [entity.status.column, t.due.column, entity.idColumn],
    'the scanner and backfill page through (status, due, id)',
  );
}

function eventFieldProblems(at: string, table: TableInfo, t: Transition): string[] {
  const problems: string[] = [];
  for (const f of t.event.fields) {
    if (f.source !== 'column') continue;
    const c = table.columns.get(f.column);
    if (c === undefined) problems.push(`${at}: event ${t.event.type} field ${f.name}: column ${f.column} does not exist`);
    else if (!PAYLOAD.has(c.dataType))
      problems.push(`${at}: event ${t.event.type} field ${f.name}: column ${f.column} is ${c.columnType}, which an event cannot carry`);
    // The event is built from the locked row and the assignments: a column the server sets on
    // update (ON UPDATE CURRENT_TIMESTAMP) would carry its value from before the transition.
    else if (c.autoUpdated === true && !t.set.some((a) => a.column === f.column)) {
      problems.push(
        `${at}: event ${t.event.type} field ${f.name}: column ${f.column} is set by the server on every update, so the event would carry its old value; assign it in set ({"now": …}) or drop the field`,
      );
    }
  }
  return problems;
}

type SchemaScope = Readonly<{ catalogue: EntityCatalogue; schema: SchemaInfo; schemaNames: Readonly<Record<string, string>> }>;

/** An effect on another entity's row: its link column and index, its statuses and assignments. */
function effectProblems(scope: SchemaScope, effectAt: string, entity: Entity, fx: Transition['effects'][number]): string[] {
  const other = scope.catalogue.entities.find((e) => e.name === fx.entity);
  // An effect's entity has one table, on this database (core/entity-file.ts).
  const otherLocation = other?.locations[0];
  const otherTable = otherLocation === undefined ? undefined : scope.schema.get(otherLocation.key);
  if (other === undefined || otherLocation === undefined || otherTable === undefined) return []; // reported with that entity
  const otherName = qualified(otherLocation, scope.schemaNames);
  const fat = `${effectAt} on ${other.name} (${otherName})`;
  const problems: string[] = [];
  const link = otherTable.columns.get(fx.column);
  if (link === undefined) problems.push(`${fat}: column ${fx.column} does not exist`);
  else if (!INTEGER.has(link.dataType)) problems.push(`${fat}: column ${fx.column} is ${link.columnType}; it must hold ${entity.name} ids (an integer type)`);
  const fxIndex = otherTable.indexes.find((i) => i.name === fx.index);
  if (fxIndex === undefined || fxIndex.columns[0] !== fx.column) {
    problems.push(
      `${fat}: index ${fx.index} ${fxIndex === undefined ? 'does not exist' : `starts with ${fxIndex.columns[0]}`}; the effect's locking read needs it: CREATE INDEX ${fx.index} ON ${otherName} (${fx.column})`,
    );
  }
  const otherStatus = otherTable.columns.get(other.status.column);
  if (otherStatus !== undefined) for (const v of [...fx.from, fx.to]) problems.push(...valueProblems(fat, otherStatus, v));
  problems.push(...assignmentProblems(fat, otherTable, fx.set));
  return problems;
}

function statusTypeProblems(at: string, entity: Entity, c: ColumnInfo): string[] {
  if (entity.status.type === 'integer' && !INTEGER.has(c.dataType))
    return [`${at}: status column ${c.name} is ${c.columnType}, but the file says its values are integers`];
  if (entity.status.type === 'string' && !CHARACTER.has(c.dataType))
    return [`${at}: status column ${c.name} is ${c.columnType}, but the file says its values are strings`];
  return [];
}

function isPrimaryKey(table: TableInfo, column: string): boolean {
  const pk = table.indexes.find((i) => i.name === 'PRIMARY');
  return pk !== undefined && pk.columns.length === 1 && pk.columns[0] === column;
}
