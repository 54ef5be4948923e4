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
 * Pure: no clock, no I/O. A change that cannot be read throws CdcInvalidError naming the field
 * (core/change-values.ts reads them); the caller sends the record to the DLQ (I5). The entry's
 * wire format: core/bucket-entry-codec.ts.
 */
import type { CdcChange, CdcRow } from './cdc-envelope';
import { dueOf, idOf, statusOf } from './change-values';
import { isDigested, isSpread, type Entity, type Location, type StatusValue, type Transition } from './entity-catalogue';
import { isDecimalId } from './field-checks';
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
export const ReminderSkips = ['past', 'no_user', 'bad_user', 'moved', 'not_expirable', 'due_passed', 'superseded', 'reconfigured'] as const;
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
