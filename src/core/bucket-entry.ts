/**
 * Bucket entries: what the scheduler must schedule, derived from one CDC change.
 *
 * Glossary
 *   entry       { entity, transition, id, expireAtMs } — "look at this row for this transition
 *               at this instant"
 *   live        a transition is live for a row whose status is one of its `from` states (the
 *               catalogue's; an entity may have several transitions, each with its due column)
 *
 * An entry is a reminder, not a command: the expirer re-reads the row and its guarded update
 * decides (I2). So a redundant entry costs one no-op lookup, while a missing one loses a
 * transition until the compensation scanner finds it (I3). Hence the rule below errs toward
 * emitting: per transition, an entry whenever a row ENTERS one of its from-states or its due
 * column changes while in one; never for changes that cannot make a row due at a new time.
 *
 * For the default file: a LOCKED coupon is not in `coupon.expired`'s from-states, so the unpaid
 * order holding it decides. Cancelling the order moves the coupon LOCKED → ACTIVE in the same
 * transaction, and that CDC update re-schedules it.
 *
 * Tombstones (value null after a delete) are the caller's: `decodeCdcValue` returns
 * { kind: 'tombstone' } and there is nothing to schedule, so this module only sees changes.
 *
 * Pure: no clock, no I/O. A change that cannot be read throws CdcInvalidError naming the field;
 * the caller sends the record to the DLQ (I5). The entry's wire format: core/bucket-entry-codec.ts.
 */
import type { CdcChange, CdcRow } from './cdc-envelope';
import { decodeDebeziumInstant } from './debezium-time';
import { isDigested, isSpread, type Entity, type Location, type StatusValue, type Transition } from './entity-catalogue';
import { describe, isDecimalId, MAX_BIGINT_UNSIGNED, typeName } from './field-checks';
import { CdcInvalidError } from './errors';

/**
 * `at`: the location key (`<database>.<table>`) of a spread entity's row; absent otherwise.
 * `remind`: a reminder (docs/reminders.md) of the row due at `dueAtMs`, `beforeMs` before it;
 * `expireAtMs` is then its fire time. `user`: the digest's user, whose shard keys the entry.
 */
export type BucketEntry = Readonly<{ entity: string; transition: string; id: string; expireAtMs: number; at?: string; remind?: ReminderOf }>;
export type ReminderOf = Readonly<{ dueAtMs: number; beforeMs: number; user?: string }>;

/**
 * The statement shape of the batch an entry goes in: its transition's, a reminder's or a
 * digest's. A batch holds one kind (hold/expirer-sink.ts, replay groups them so), which is what
 * expire/reminder-batch.ts relies on when it reads a batch's first entry.
 */
export type BatchKind = 'transition' | 'remind' | 'digest';

export function batchKindOf(entry: Readonly<{ remind?: ReminderOf }>): BatchKind {
  return entry.remind === undefined ? 'transition' : entry.remind.user === undefined ? 'remind' : 'digest';
}

/** Why a fire point got no entry or, at fire time, no event (timebucket_reminders_skipped_total). */
export const ReminderSkips = ['past', 'no_user', 'bad_user', 'moved', 'not_expirable', 'due_passed', 'reconfigured'] as const;
export type ReminderSkip = (typeof ReminderSkips)[number];
export type SkipCounter = (reason: ReminderSkip, transition: Transition) => void;

/**
 * When the reminder `beforeMs` before `dueAtMs` fires: that instant, or with a digest the start
 * of the window it falls in (windows aligned to the epoch), so that a user's reminders of one
 * window fire, and are read, together.
 */
export function reminderFireAt(t: Transition, dueAtMs: number, beforeMs: number): number {
  const point = dueAtMs - beforeMs;
  const w = t.reminders?.digest?.windowMs;
  return w === undefined || !isDigested(t, beforeMs) ? point : Math.floor(point / w) * w;
}

/** The range of a JS Date (±100,000,000 days), as debezium-time.ts. */
const MAX_ABS_MS = 8.64e15;

/**
 * One entry per live transition whose due time is new to the scheduler; [] for a delete.
 * `location`: where the change happened, required for a spread entity (the caller reads it from
 * the topic and the envelope's source.table, ingest/cdc-topics.ts), ignored otherwise.
 */
export function entriesFromChange(entity: Entity, change: CdcChange, location?: Location, skipped?: SkipCounter): BucketEntry[] {
  if (change.op === 'd' || change.after === null) return [];
  const after = change.after;
  // Read (and so validated) even when nothing is live: an unknown state is corrupt data (I5).
  const status = statusOf(entity, after, 'after');
  const live = entity.transitions.filter((t) => inFrom(t, status));
  if (live.length === 0) return [];
  const id = idOf(entity, after, change);
  const at = isSpread(entity) ? location?.key : undefined;
  // A programmer error: the caller resolves the location before it decodes the change.
  if (isSpread(entity) && at === undefined) throw new RangeError(`a change of spread entity '${entity.name}' needs its location`);
  const entries: BucketEntry[] = [];
  for (const t of live) {
    const expireAtMs = dueOf(t, after, change, 'after');
    // NULL: the row has no deadline for this transition. Nothing can become due (the expirer's
    // and the scanner's `due <= now` is never true for NULL), so skipping it loses nothing (I3);
    // setting the column later is an update that changes the due time, and schedules it then.
    if (expireAtMs === null) continue;
    // c, r, or an update without a before image: the row appears live, or we cannot prove otherwise.
    if (
      change.op === 'u' &&
      change.before !== null &&
      unchangedWhileLive(entity, t, change.before, change, expireAtMs) &&
      !userChanged(t, change.before, after)
    )
      continue;
    const base = at === undefined ? { entity: entity.name, transition: t.name, id } : { entity: entity.name, transition: t.name, id, at };
    entries.push(Object.freeze({ ...base, expireAtMs }));
    if (t.reminders !== null) entries.push(...reminderEntries(t, base, expireAtMs, after, appearedAtMs(change), skipped, change.fieldSchemas));
  }
  return entries;
}

/**
 * When the row appeared, at the latest: Debezium's source.ts_ms is the binlog event's time,
 * whole seconds on MariaDB (and on MySQL without commit timestamps), so a whole-second value
 * stands for any moment of that second and its last millisecond is taken. A fire point within it
 * is then skipped rather than sent late. Without ts_ms (Debezium always sets it) nothing counts
 * as past, and the fire-time guard still sends nothing after the due time.
 */
function appearedAtMs(change: CdcChange): number {
  const ts = change.source.tsMs;
  if (ts === undefined) return 0;
  return ts % 1000 === 0 ? ts + 999 : ts;
}

/**
 * The row's reminders for the due time `dueAtMs`: one per fire point still ahead when the row
 * appeared (`appearedAtMs`, the change's commit time, so a replay decides the same). A fire
 * point already past is skipped, never sent late.
 */
export function reminderEntries(
  t: Transition,
  base: Readonly<{ entity: string; transition: string; id: string; at?: string }>,
  dueAtMs: number,
  row: CdcRow,
  appearedAtMs: number,
  skipped?: SkipCounter,
  fieldSchemas: Readonly<Record<string, string>> = {},
): BucketEntry[] {
  const r = t.reminders;
  if (r === null) return [];
  // A user that cannot be read costs its digests, never the transition's own entry.
  const user = r.digest === null ? null : userOf(row, r.digest.userColumn, fieldSchemas);
  const out: BucketEntry[] = [];
  for (const beforeMs of r.beforeMs) {
    const digested = isDigested(t, beforeMs);
    if (digested && typeof user !== 'string') {
      skipped?.(user === null ? 'no_user' : 'bad_user', t);
      continue;
    }
    const fireAt = reminderFireAt(t, dueAtMs, beforeMs);
    if (fireAt <= appearedAtMs) {
      skipped?.('past', t);
      continue;
    }
    const remind = digested && typeof user === 'string' ? { dueAtMs, beforeMs, user } : { dueAtMs, beforeMs };
    out.push(Object.freeze({ ...base, expireAtMs: fireAt, remind: Object.freeze(remind) }));
  }
  return out;
}

/**
 * A digest's user: a positive integer id within BIGINT UNSIGNED, exact (the digest's message key
 * and outbox entity id, as a row id is); null for NULL; `false` for anything else (0, negative,
 * not captured, a Connect Decimal whose base64 could pass for digits, as idOf refuses).
 */
function userOf(row: CdcRow, column: string, fieldSchemas: Readonly<Record<string, string>>): string | null | false {
  const v = row[column];
  if (v === null) return null;
  if (fieldSchemas[column] !== undefined) return false;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return String(v);
  if (typeof v === 'bigint' && isUserId(String(v))) return String(v);
  if (typeof v === 'string' && isUserId(v)) return v;
  return false;
}

const isUserId = (s: string): boolean => isDecimalId(s);

/**
 * True only if the before image proves the row was already live for `t` with the same due
 * time, so an entry for it exists. If before cannot be read (binlog_row_image=MINIMAL leaves it
 * without status; or corrupt) we cannot prove that, and emitting a duplicate is the safe side (I3).
 */
function unchangedWhileLive(entity: Entity, t: Transition, before: CdcRow, change: CdcChange, afterMs: number): boolean {
  try {
    return inFrom(t, statusOf(entity, before, 'before')) && dueOf(t, before, change, 'before') === afterMs;
  } catch (err) {
    if (err instanceof CdcInvalidError) return false;
    throw err;
  }
}

/** A digested transition's row handed to another user: its reminders go to the new user's digests. */
function userChanged(t: Transition, before: CdcRow, after: CdcRow): boolean {
  const column = t.reminders?.digest?.userColumn;
  return column !== undefined && String(before[column]) !== String(after[column]);
}

function inFrom(t: Transition, status: StatusValue | bigint): boolean {
  return t.from.some((v) => v === status);
}

/**
 * The status as the file types it. An integer column arrives as a JSON number (int8..int64), a
 * bigint only beyond 2^53: no value the file can name (they fit 32 bits), so it is in no
 * from-state, and not one of the values when the file lists them.
 */
function statusOf(entity: Entity, row: CdcRow, image: string): StatusValue | bigint {
  const { column, type, values } = entity.status;
  const status = row[column];
  const field = `${image}.${column}`;
  if (type === 'string' && typeof status !== 'string')
    throw new CdcInvalidError(`${field}: expected a string, got ${typeName(status)}`, { entity: entity.name });
  if (type === 'integer' && !(typeof status === 'bigint' || (typeof status === 'number' && Number.isSafeInteger(status)))) {
    throw new CdcInvalidError(`${field}: expected an integer, got ${describe(status)}`, { entity: entity.name });
  }
  const value = status as StatusValue | bigint;
  // Listed values are every state the table allows: anything else is corrupt data, not "not live".
  if (values !== null && !values.some((v) => v === value)) {
    throw new CdcInvalidError(`${field}: unknown ${entity.name} state ${describe(value)}`, { entity: entity.name });
  }
  return value;
}

/**
 * BIGINT UNSIGNED ids, exact: a safe JS number, a bigint (decodeCdcValue's form of an integer
 * beyond 2^53) or a canonical decimal string, in 1..2^64-1. A JS number beyond 2^53 is refused:
 * it may already be rounded, and a rounded id names another row.
 * A plain int64 column has no schema name; a named one (Connect Decimal, from
 * bigint.unsigned.handling.mode=precise) is base64 bytes, and "1234" is valid base64 too, so
 * reading it as decimal could silently schedule the wrong row. Rejected instead.
 */
function idOf(entity: Entity, row: CdcRow, change: CdcChange): string {
  const column = entity.idColumn;
  const schema = change.fieldSchemas[column];
  if (schema !== undefined) throw new CdcInvalidError(`after.${column}: unsupported Connect schema ${JSON.stringify(schema)}`);
  const id = row[column];
  if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return String(id);
  if (typeof id === 'bigint' && id > 0n && id <= MAX_BIGINT_UNSIGNED) return String(id);
  if (typeof id === 'string' && isDecimalId(id)) return id;
  throw new CdcInvalidError(`after.${column}: expected a positive integer within BIGINT UNSIGNED (exact) or its decimal string, got ${describe(id)}`);
}

/** The due instant in epoch ms, or null when the column is NULL (no deadline). */
function dueOf(t: Transition, row: CdcRow, change: CdcChange, image: string): number | null {
  const { column, kind } = t.due;
  const field = `${image}.${column}`;
  if (!Object.hasOwn(row, column) || row[column] === undefined) throw new CdcInvalidError(`${field}: missing`);
  const raw = row[column];
  if (raw === null) return null;
  let ms: number;
  try {
    ms = kind === 'datetime' ? datetimeMs(raw, change.fieldSchemas[column]) : epochMs(raw, kind === 'epoch_s' ? 1000 : 1, change.fieldSchemas[column]);
  } catch (err) {
    if (!(err instanceof CdcInvalidError)) throw err;
    throw new CdcInvalidError(`${field}: ${err.message}`, err.details);
  }
  // Entries carry non-negative times (see the wire format); no real deadline precedes 1970.
  if (ms < 0) throw new CdcInvalidError(`${field}: before 1970 (${ms} ms)`, { value: raw });
  return ms;
}

function datetimeMs(raw: unknown, schemaName: string | undefined): number {
  // A bigint here is an integer beyond 2^53: a NanoTimestamp (anything else is out of range).
  // decodeDebeziumInstant takes the double JSON.parse used to give (Number() rounds the same
  // way) and floors it to ms, as before.
  return decodeDebeziumInstant(typeof raw === 'bigint' ? Number(raw) : raw, schemaName);
}

/**
 * An integer column holding epoch ms or s: a JSON number (a bigint beyond 2^53, out of range for
 * either unit). A Connect schema name means the column is not a plain integer (a temporal type,
 * whose unit the name gives and this kind would misread by 1000×; a Decimal as base64): refused.
 */
function epochMs(raw: unknown, msPerUnit: number, schemaName: string | undefined): number {
  const unit = msPerUnit === 1 ? 'epoch_ms' : 'epoch_s';
  if (schemaName !== undefined) throw new CdcInvalidError(`unsupported Connect schema ${JSON.stringify(schemaName)} for an ${unit} column`, { schemaName });
  if (typeof raw === 'bigint') {
    if (raw > BigInt(Number.MAX_SAFE_INTEGER) || raw < -BigInt(Number.MAX_SAFE_INTEGER))
      throw new CdcInvalidError(`${unit} out of range: ${raw}`, { value: String(raw) });
    return checkedMs(Number(raw) * msPerUnit, raw, unit);
  }
  if (typeof raw !== 'number' || !Number.isInteger(raw)) throw new CdcInvalidError(`${unit} must be an integer, got ${describe(raw)}`, { value: raw });
  return checkedMs(raw * msPerUnit, raw, unit);
}

function checkedMs(ms: number, raw: number | bigint, unit: string): number {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > MAX_ABS_MS) throw new CdcInvalidError(`${unit} out of range: ${String(raw)}`, { value: String(raw) });
  return ms;
}

// ---- wire format ---------------------------------------------------------------------------

/**
 * Whether a decoded reminder is one the catalogue declares now: one of the transition's fire
 * points, fired where reminderFireAt puts it, with a user exactly when it is digested. An entry
 * written before the file changed (a fire point or window edited, a digest added or removed) is
 * not poison: it is skipped at its fire time as `reconfigured`, and the new entries of the rows'
 * next changes follow the new file.
 */
export function reminderMatches(t: Transition, entry: Readonly<{ expireAtMs: number; remind: ReminderOf }>): boolean {
  const { dueAtMs, beforeMs, user } = entry.remind;
  if (t.reminders === null || !t.reminders.beforeMs.includes(beforeMs)) return false;
  if (isDigested(t, beforeMs) !== (user !== undefined)) return false;
  return entry.expireAtMs === reminderFireAt(t, dueAtMs, beforeMs);
}
