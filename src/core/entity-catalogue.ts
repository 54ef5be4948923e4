/**
 * The entity catalogue: what timebucket knows of the tables it moves on time, built once from
 * the entities file (TB_ENTITIES, parsed by core/entity-file.ts) and read by every stage: the
 * CDC decoder, the router's entries, the expiry transaction, the scanner, backfill, replay, the
 * operator's switches, metric labels and the event catalogue. No stage names a table, a column
 * or a status value of its own.
 *
 * Glossary
 *   entity       a kind of row (coupon, order) living in one table, with an id column (BIGINT,
 *                exact to 64 bits as a decimal string) and a status column
 *   status value typed as the column is: a string (any Unicode, '待使用') or an integer code
 *   transition   a timed edge of the entity's state machine: a row whose status is one of
 *                `from` moves to `to` once its `due` column has passed by the database clock,
 *                making the assignments `set`, the side `effects`, and one event. An entity may
 *                have several (an order's payment timeout; a coupon's expiry and its lock timeout)
 *   due kind     how the due column holds an instant: `datetime` (DATETIME(n) or TIMESTAMP, read
 *                in UTC), `epoch_ms` or `epoch_s` (an integer column)
 *   effect       rows of another entity that the transition changes in the same transaction:
 *                those whose `column` holds this row's id and whose status is in `from` go to
 *                `to` (an order's cancellation releases the coupon it locked). They are locked
 *                after the transition's own rows: the one lock order, so no two batches deadlock
 *   ref          `<entity>.<transition>`: the unit of one batch (one SQL statement shape)
 *
 * Pure data: no I/O. Lookups throw on a name the catalogue does not hold, because every name
 * reaching them was validated where it entered (the file, an entry's decoder, a CLI option).
 */

export type StatusValue = string | number;
export type StatusType = 'string' | 'integer';
export type DueKind = 'datetime' | 'epoch_ms' | 'epoch_s';

/** What a transition (or effect) writes into a column besides the status. */
export type Assignment = Readonly<
  | { kind: 'value'; column: string; value: string | number | null }
  | { kind: 'now'; column: string; unit: DueKind }
  | { kind: 'increment'; column: string; by: number }
>;

/**
 * A field an event carries besides the standard ones (see EventSpec). `column`: the row's value
 * after the transition (an assigned column's new value, else the locked row's); `effect`: a
 * boolean, whether that effect (by index) changed a row of the other entity for this one.
 */
export type PayloadField = Readonly<{ name: string; source: 'column'; column: string } | { name: string; source: 'effect'; effect: number }>;

/**
 * One event type. Every event carries, in this order: event_key, event_type, <idField> (the
 * entity id, also the message key and ce_subject), from_status, to_status, due_at, occurred_at
 * (timestamp-millis), path, then `fields`. `schemaFile` names a file under schemas/ whose record
 * must have exactly those fields; without it the schema is derived from the column types.
 */
/**
 * transition: a row moved (from_status → to_status). reminder: a row's due time is near (one
 * per row and fire point). digest: a user's rows whose due times are near (one per user, window
 * and fire point; `idField` is the user's field, `itemIdField` the row id in each listed item).
 */
export type EventKind = 'transition' | 'reminder' | 'digest';

export type EventSpec = Readonly<{
  kind: EventKind;
  type: string;
  ceType: string;
  avroName: string;
  idField: string;
  /** A digest's row-id field in each item; null for the other kinds. */
  itemIdField: string | null;
  summary: string;
  schemaFile: string | null;
  fields: readonly PayloadField[];
  /** The entity and transition that emit it (one each: an event type belongs to one transition). */
  entity: string;
  transition: string;
}>;

export type Effect = Readonly<{
  entity: string;
  /** The other entity's column holding this row's id. */
  column: string;
  from: readonly StatusValue[];
  to: StatusValue;
  set: readonly Assignment[];
  /** The index on `column` the locking read is forced onto. */
  index: string;
}>;

export type Transition = Readonly<{
  name: string;
  entity: string;
  /** `<entity>.<transition>` */
  ref: string;
  from: readonly StatusValue[];
  to: StatusValue;
  due: Readonly<{ column: string; kind: DueKind }>;
  /** The (status, due, id) index the scanner and backfill page through. */
  index: string;
  set: readonly Assignment[];
  effects: readonly Effect[];
  event: EventSpec;
  /** Fire points before the due time (docs/reminders.md); null when the file declares none. */
  reminders: Reminders | null;
}>;

/**
 * A transition's reminders: `beforeMs` the offsets before the due time, largest first. The fire
 * points in `digest.beforeMs` are digested (one event per user and window); every other one is
 * an `event` per row (present exactly when some fire point is not digested).
 */
export type Reminders = Readonly<{
  beforeMs: readonly number[];
  event: EventSpec | null;
  /** `index`: its first column `userColumn`, through which the digest reads a user's rows. */
  digest: Readonly<{ beforeMs: readonly number[]; userColumn: string; index: string; windowMs: number; event: EventSpec }> | null;
}>;

/** Whether the fire point `beforeMs` of `t` is digested (keyed by the user, fired at its window's start). */
export function isDigested(t: Pick<Transition, 'reminders'>, beforeMs: number): boolean {
  return t.reminders?.digest?.beforeMs.includes(beforeMs) === true;
}

/** The connection TB_DB_* configures; other database names are connections of TB_DATABASES. */
export const MAIN_DATABASE = 'main';

/** One physical table of an entity: `database` names a connection; key = `<database>.<table>`. */
export type Location = Readonly<{ database: string; table: string; key: string }>;

/** `<schema>.<table>` of a location, as the server names it (the connection name when unknown): for messages. */
export function qualified(location: Pick<Location, 'database' | 'table'>, schemaNames: Readonly<Record<string, string>>): string {
  return `${schemaNames[location.database] ?? location.database}.${location.table}`;
}

export type Entity = Readonly<{
  name: string;
  /** The table as the file writes it (a name, a set `coupon_{00..63}`, or locations): for messages, never for SQL. */
  table: string;
  /**
   * Every physical table, in file order (a set expanded). One batch touches one of them. An
   * entity with more than one is "spread": its entries carry their location (bucket-entry.ts)
   * and its shards are split by database (router.ts shardOfEntry).
   */
  locations: readonly Location[];
  /** The distinct databases of `locations`, in file order. */
  databases: readonly string[];
  idColumn: string;
  /** How late its transitions may be (the entities file's latenessBudgetSeconds, default 120 s): pacing never holds a due row longer. */
  latenessBudgetMs: number;
  status: Readonly<{ column: string; type: StatusType; values: readonly StatusValue[] | null }>;
  transitions: readonly Transition[];
  /** Where its rows go once long past their last transition; null when the file declares no archive. */
  archive: Archive | null;
}>;

/**
 * An entity's archive (issue 44): rows in one of `finalStates` whose `since` column is more than
 * `afterMs` old move, a page at a time through `index` (status, since, id) on the hot table, to
 * the archive table of their hot table, on the same database. No final state is a from-state of
 * any transition or effect (entity-file-checks.ts): nothing timebucket expires is ever archived.
 * `budgetMs`: how long a backlog may take to move.
 */
export type Archive = Readonly<{
  finalStates: readonly StatusValue[];
  since: Readonly<{ column: string; kind: DueKind }>;
  afterMs: number;
  budgetMs: number;
  index: string;
  /** Each hot table (the entity's locations, in order) and its archive table. */
  tables: ReadonlyArray<Readonly<{ hot: Location; archive: Location }>>;
}>;

export type EntityCatalogue = Readonly<{
  /** In file order. */
  entities: readonly Entity[];
  /** Every transition of every entity, in file order. */
  transitions: readonly Transition[];
  events: readonly EventSpec[];
  source: string;
}>;

export function entityNames(catalogue: EntityCatalogue): string[] {
  return catalogue.entities.map((e) => e.name);
}

export function findEntity(catalogue: EntityCatalogue, name: string): Entity | undefined {
  return catalogue.entities.find((e) => e.name === name);
}

export function entityOf(catalogue: EntityCatalogue, name: string): Entity {
  const entity = findEntity(catalogue, name);
  if (entity === undefined) throw new RangeError(`no entity '${name}' in ${catalogue.source}`);
  return entity;
}

export function findTransition(catalogue: EntityCatalogue, entity: string, transition: string): Transition | undefined {
  return findEntity(catalogue, entity)?.transitions.find((t) => t.name === transition);
}

export function transitionOf(catalogue: EntityCatalogue, entity: string, transition: string): Transition {
  const t = findTransition(catalogue, entity, transition);
  if (t === undefined) throw new RangeError(`no transition '${entity}.${transition}' in ${catalogue.source}`);
  return t;
}

export function isSpread(entity: Entity): boolean {
  return entity.locations.length > 1;
}

/** The location `key` of a spread entity, or the only location of one that is not (key ignored). */
export function findLocation(entity: Entity, key: string | undefined): Location | undefined {
  if (!isSpread(entity)) return entity.locations[0];
  return key === undefined ? undefined : entity.locations.find((l) => l.key === key);
}

export function locationOf(entity: Entity, key: string | undefined): Location {
  const loc = findLocation(entity, key);
  if (loc === undefined) throw new RangeError(`no location ${JSON.stringify(key)} of entity '${entity.name}'`);
  return loc;
}

/** Every database any entity lives on, main first. */
export function databasesOf(catalogue: EntityCatalogue): string[] {
  return [...new Set([MAIN_DATABASE, ...catalogue.entities.flatMap((e) => e.databases)])];
}

/** The databases `catalogue` names that `configured` (config.databases) lacks, as problems naming the fix. */
export function unconfiguredDatabases(catalogue: EntityCatalogue, configured: Readonly<Record<string, unknown>>): string[] {
  return databasesOf(catalogue)
    .filter((name) => configured[name] === undefined)
    .map((name) => `database '${name}' is named by ${catalogue.source} but not configured: add it to TB_DATABASES, with TB_DB_${name.toUpperCase()}_HOST`);
}

export function findEvent(catalogue: EntityCatalogue, type: string): EventSpec | undefined {
  return catalogue.events.find((e) => e.type === type);
}

/**
 * event_key = <entity>-<transition>-<id>-<due ms>-<occurred ms>: one per transition of a row. The
 * same on every redelivery of its event (I4); a row put back into a from-state and moved again,
 * even at the same due time, is another transition at another database time, so another key.
 * Only one path can move a row out of a from-state (the guarded update), so the stream, the
 * scanner and a replay never write two keys for one transition.
 */
export function eventKeyOf(t: Pick<Transition, 'entity' | 'name'>, id: string, dueAtMs: number, occurredAtMs: number): string {
  return `${t.entity}-${t.name}-${id}-${dueAtMs}-${occurredAtMs}`;
}

/** A reminder's event_key: once per (row, due time, fire point) across replays (docs/reminders.md). */
export function reminderKeyOf(t: Pick<Transition, 'entity' | 'name'>, id: string, dueAtMs: number, beforeMs: number): string {
  return `${t.entity}-${t.name}-remind-${id}-${dueAtMs}-${beforeMs}`;
}

/** A digest part's event_key: once per (user, fire point, window, part). */
export function digestKeyOf(t: Pick<Transition, 'entity' | 'name'>, user: string, beforeMs: number, windowStartMs: number, part: number): string {
  return `${t.entity}-${t.name}-digest-${user}-${beforeMs}-${windowStartMs}-${part}`;
}
