/**
 * The events timebucket publishes for other teams, built from the transition's EventSpec in the
 * entity catalogue, and their deduplication keys.
 *
 * event_key = <entity>-<transition>-<id>-<due ms>-<occurred ms> (eventKeyOf): the same on every
 * redelivery of one transition's event (so a subscriber can drop duplicates, invariant I4), and
 * different for every other transition of the row, at a new due time or at the same one.
 *
 * Payload (the outbox JSON), in this order: event_key, event_type, <idField>, from_status (the
 * locked row's status), to_status, due_at, occurred_at (the database clock that guarded the
 * update, I2), path, then the spec's declared fields: a `column` field is the row's value AFTER
 * the transition (what an assignment wrote, else the locked row's value), an `effect` field is
 * a boolean: did that effect change a row of the other entity for this one.
 *
 * Ids are BIGINT: snowflake-style ids pass 2^53, where a JS number stops being exact. So in the
 * program and in the payload JSON every BIGINT value is a canonical decimal string; the published
 * Avro field is a `long`, written exactly from it. An Avro long is signed, so an id above 2^63-1
 * (the upper half of BIGINT UNSIGNED) cannot be published: the encoder rejects such an event (it
 * is dead-lettered, publish/dead-letter-events.ts) rather than wrap it to a negative id. DATETIME values are epoch ms; NULL stays null.
 *
 * Pure: the caller decodes the driver's values (expire/row-values.ts) before they get here.
 */
import type { ColumnValue, ReadRow } from './expiry-plan';
import { digestKeyOf, eventKeyOf, reminderKeyOf, type Assignment, type EventSpec, type StatusValue, type Transition } from './entity-catalogue';

/** Which path performed a transition: the bucket stream, the compensation scanner, or a replay. */
export const ExpiryPaths = ['stream', 'scanner', 'replay'] as const;
export type ExpiryPath = (typeof ExpiryPaths)[number];

/** A BIGINT id as its canonical decimal string ("9223372036854775807"). */
export type DecimalId = string;

export type { ColumnValue } from './expiry-plan';
/** A digest's `items` are records of column values. */
export type PayloadItem = Readonly<Record<string, ColumnValue>>;
export type PayloadValue = ColumnValue | boolean | readonly PayloadItem[];

/** One event's payload. Any event of any catalogue; the encoder checks it against its schema. */
export type EventPayload = Readonly<{ event_key: string; event_type: string } & Record<string, PayloadValue>>;

/** What the transaction knows of one row it transitioned. */
export type TransitionedRow = Readonly<{
  id: DecimalId;
  /** The locked row's status: one of the transition's from-set. */
  status: StatusValue;
  dueAtMs: number;
  /** The locked row's values of eventColumns(transition), decoded. */
  columns: Readonly<Record<string, ColumnValue>>;
}>;

export type EventFacts = Readonly<{
  /** The database clock of the transaction: it guarded the update and stamped every `now` assignment. */
  occurredAtMs: number;
  path: ExpiryPath;
  /** Per effect of the transition (by index): whether it changed a row for this one. */
  effects: readonly boolean[];
}>;

/**
 * The columns the locking read must return for the event: every `column` field whose value
 * after the transition is not known without it (not assigned, or incremented from the old value).
 */
export function eventColumns(t: Transition): string[] {
  const out: string[] = [];
  for (const f of t.event.fields) {
    if (f.source !== 'column' || out.includes(f.column)) continue;
    const a = assignmentOf(t, f.column);
    if (a === undefined || a.kind === 'increment') out.push(f.column);
  }
  return out;
}

/** The event of one committed transition, as every path that makes it writes it to the outbox. */
export function transitionEvent(t: Transition, row: TransitionedRow, facts: EventFacts): EventPayload {
  return eventBuilder(t)(row, facts);
}

export type EventBuilder = (row: TransitionedRow, facts: EventFacts) => EventPayload;

/**
 * transitionEvent for one transition, its field plan worked out once: the expiry transaction
 * builds a batch's events with it, without looking up each field's assignment per row.
 */
export function eventBuilder(t: Transition): EventBuilder {
  const fields = t.event.fields.map((f) =>
    f.source === 'effect'
      ? ({ kind: 'effect', name: f.name, effect: f.effect } as const)
      : ({ kind: 'column', name: f.name, column: f.column, assignment: assignmentOf(t, f.column) } as const),
  );
  return (row, facts) => {
    const payload: Record<string, PayloadValue> = {
      event_key: eventKeyOf(t, row.id, row.dueAtMs, facts.occurredAtMs),
      event_type: t.event.type,
      [t.event.idField]: row.id,
      from_status: row.status,
      to_status: t.to,
      due_at: row.dueAtMs,
      occurred_at: facts.occurredAtMs,
      path: facts.path,
    };
    for (const f of fields) {
      payload[f.name] = f.kind === 'effect' ? facts.effects[f.effect] === true : valueAfter(t, f.column, f.assignment, row.columns, facts.occurredAtMs);
    }
    return payload as EventPayload;
  };
}

/** A column's value after the transition: what its assignment wrote, else the locked row's value. */
export function columnAfter(t: Transition, column: string, locked: Readonly<Record<string, ColumnValue>>, dbNowMs: number): ColumnValue {
  return valueAfter(t, column, assignmentOf(t, column), locked, dbNowMs);
}

function valueAfter(t: Transition, column: string, a: Assignment | undefined, locked: Readonly<Record<string, ColumnValue>>, dbNowMs: number): ColumnValue {
  const old = locked[column];
  if (a === undefined) {
    if (old === undefined) throw new RangeError(`${t.ref}: column ${column} was not read`);
    return old;
  }
  switch (a.kind) {
    case 'value':
      return a.value;
    case 'now':
      // The instant the UPDATE bound (db/due-value.ts dueValueOf), as the payload carries instants.
      return a.unit === 'epoch_s' ? Math.floor(dbNowMs / 1000) : dbNowMs;
    case 'increment':
      if (old === undefined) throw new RangeError(`${t.ref}: column ${column} was not read`);
      return incremented(old, a.by, `${t.ref}: ${column}`);
  }
}

function assignmentOf(t: Transition, column: string): Assignment | undefined {
  return t.set.find((a) => a.column === column);
}

/** SQL's `col + by`: NULL stays NULL; a BIGINT (decimal string) stays exact. */
function incremented(old: ColumnValue, by: number, what: string): ColumnValue {
  if (old === null) return null;
  if (typeof old === 'number') return old + by;
  if (/^-?[0-9]+$/.test(old)) return String(BigInt(old) + BigInt(by));
  throw new TypeError(`${what}: cannot increment ${JSON.stringify(old)}`);
}

export type ReminderFacts = Readonly<{ occurredAtMs: number; path: ExpiryPath; beforeMs: number }>;

/** COUPON_EXPIRING_SOON and its kind: one row, one fire point. */
/** `row`: as the reminder read it (its columns unchanged: a reminder changes nothing; expireAtMs its due time). */
export function reminderEvent(t: Transition, spec: EventSpec, row: ReadRow, facts: ReminderFacts): EventPayload {
  const payload: Record<string, PayloadValue> = {
    event_key: reminderKeyOf(t, row.id, row.expireAtMs, facts.beforeMs),
    event_type: spec.type,
    [spec.idField]: row.id,
    status: row.status,
    due_at: row.expireAtMs,
    remind_before_ms: facts.beforeMs,
    occurred_at: facts.occurredAtMs,
    path: facts.path,
  };
  for (const f of spec.fields) if (f.source === 'column') payload[f.name] = columnOf(t, row.columns, f.column);
  return payload as EventPayload;
}

export type DigestFacts = ReminderFacts & Readonly<{ user: string; windowStartMs: number }>;

/**
 * At most this many rows per digest event: a user with thousands of rows in one window gets
 * several parts (each with its part number in its event_key), every one far under a topic's
 * record limit (docs/reminders.md).
 */
export const DIGEST_PART_ITEMS = 500;

/**
 * USER_COUPONS_EXPIRING_SOON and its kind: a user's rows for one fire point and window, by due
 * time then id, in parts of at most `maxItems` (part 1 of 1 for most users).
 */
export function digestEvents(t: Transition, spec: EventSpec, rows: readonly ReadRow[], facts: DigestFacts, maxItems = DIGEST_PART_ITEMS): EventPayload[] {
  const itemId = spec.itemIdField ?? 'id';
  const items = [...rows]
    .sort((a, b) => a.expireAtMs - b.expireAtMs || a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((row) => {
      const item: Record<string, ColumnValue> = { [itemId]: row.id, due_at: row.expireAtMs };
      for (const f of spec.fields) if (f.source === 'column') item[f.name] = columnOf(t, row.columns, f.column);
      return item;
    });
  const parts = Math.max(1, Math.ceil(items.length / maxItems));
  return Array.from({ length: parts }, (_, i) => {
    const payload: Record<string, PayloadValue> = {
      event_key: digestKeyOf(t, facts.user, facts.beforeMs, facts.windowStartMs, i + 1),
      event_type: spec.type,
      [spec.idField]: facts.user,
      remind_before_ms: facts.beforeMs,
      window_start: facts.windowStartMs,
      occurred_at: facts.occurredAtMs,
      path: facts.path,
      items: items.slice(i * maxItems, (i + 1) * maxItems),
      part: i + 1,
      parts,
    };
    return payload as EventPayload;
  });
}

function columnOf(t: Transition, columns: Readonly<Record<string, ColumnValue>>, column: string): ColumnValue {
  const v = columns[column];
  if (v === undefined) throw new RangeError(`${t.ref}: column ${column} was not read`);
  return v;
}
