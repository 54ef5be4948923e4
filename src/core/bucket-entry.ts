/**
 * Bucket entries: what the scheduler must schedule, derived from one CDC change.
 *
 * Glossary
 *   entry       { v: 1, entity, id, expireAtMs } — "look at this row at this instant"
 *   expirable   the one state per entity that timebucket moves on time:
 *               coupon ACTIVE → EXPIRED, order UNPAID → CANCELLED
 *
 * An entry is a reminder, not a command: the expirer re-reads the row and its guarded update
 * decides (I2). So a redundant entry costs one no-op lookup, while a missing one loses a
 * transition until the compensation scanner finds it (I3). Hence the rule below errs toward
 * emitting: an entry whenever a row ENTERS its expirable state or its expire_time changes while
 * expirable; never for changes that cannot make a row due at a new time.
 *
 * A LOCKED coupon is not expirable: the unpaid order holding it decides. Cancelling the order
 * moves the coupon LOCKED → ACTIVE in the same transaction, and that CDC update re-schedules it.
 *
 * Tombstones (value null after a delete) are the caller's: `decodeCdcValue` returns
 * { kind: 'tombstone' } and there is nothing to schedule, so this module only sees changes.
 *
 * Pure: no clock, no I/O. A change that cannot be read throws CdcInvalidError naming the field;
 * the caller sends the record to the DLQ (I5).
 */
import type { CdcChange, CdcRow } from './cdc-envelope';
import { decodeDebeziumInstant } from './debezium-time';
import { CdcInvalidError } from './errors';

export type EntityType = 'coupon' | 'order';
export type BucketEntry = Readonly<{ v: 1; entity: EntityType; id: string; expireAtMs: number }>;

export const EXPIRABLE: Readonly<Record<EntityType, string>> = Object.freeze({ coupon: 'ACTIVE', order: 'UNPAID' });

/** Every state the tables' CHECK constraints allow: anything else is corrupt data, not "not expirable". */
const STATES: Readonly<Record<EntityType, ReadonlySet<string>>> = {
  coupon: new Set(['INIT', 'ACTIVE', 'LOCKED', 'USED', 'EXPIRED', 'INVALID']),
  order: new Set(['UNPAID', 'PAID', 'CANCELLED', 'FINISHED']),
};

const TABLES: Readonly<Record<string, EntityType>> = { coupons: 'coupon', orders: 'order' };

/** 2^64 - 1: ids are BIGINT UNSIGNED. */
const MAX_BIGINT_UNSIGNED = 18446744073709551615n;

export function entityOfTable(table: string): EntityType | undefined {
  return Object.hasOwn(TABLES, table) ? TABLES[table] : undefined;
}

export function entryFromChange(entity: EntityType, change: CdcChange): BucketEntry | null {
  if (change.op === 'd' || change.after === null) return null;
  const after = change.after;
  if (statusOf(entity, after, 'after') !== EXPIRABLE[entity]) return null;
  const entry: BucketEntry = { v: 1, entity, id: idOf(after, change), expireAtMs: expireAtOf(after, change, 'after') };
  if (change.op !== 'u' || change.before === null) return entry; // c, r: the row appears expirable
  return unchangedWhileExpirable(entity, change.before, change, entry.expireAtMs) ? null : entry;
}

/**
 * True only if the before image proves the row was already expirable with the same due time,
 * so an entry for it exists. If before cannot be read (binlog_row_image=MINIMAL leaves it
 * without status; or corrupt) we cannot prove that, and emitting a duplicate is the safe side.
 */
function unchangedWhileExpirable(entity: EntityType, before: CdcRow, change: CdcChange, afterMs: number): boolean {
  try {
    return statusOf(entity, before, 'before') === EXPIRABLE[entity] && expireAtOf(before, change, 'before') === afterMs;
  } catch (err) {
    if (err instanceof CdcInvalidError) return false;
    throw err;
  }
}

function statusOf(entity: EntityType, row: CdcRow, image: string): string {
  const status = row['status'];
  if (typeof status !== 'string') throw new CdcInvalidError(`${image}.status: expected a string, got ${typeName(status)}`, { entity });
  if (!STATES[entity].has(status)) throw new CdcInvalidError(`${image}.status: unknown ${entity} state ${JSON.stringify(status)}`, { entity });
  return status;
}

/**
 * BIGINT UNSIGNED ids, exact: a safe JS number, a bigint (decodeCdcValue's form of an integer
 * beyond 2^53) or a canonical decimal string, in 1..2^64-1. A JS number beyond 2^53 is refused:
 * it may already be rounded, and a rounded id names another row.
 * A plain int64 column has no schema name; a named one (Connect Decimal, from
 * bigint.unsigned.handling.mode=precise) is base64 bytes, and "1234" is valid base64 too, so
 * reading it as decimal could silently schedule the wrong row. Rejected instead.
 */
function idOf(row: CdcRow, change: CdcChange): string {
  const schema = change.fieldSchemas['id'];
  if (schema !== undefined) throw new CdcInvalidError(`after.id: unsupported Connect schema ${JSON.stringify(schema)}`);
  const id = row['id'];
  if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return String(id);
  if (typeof id === 'bigint' && id > 0n && id <= MAX_BIGINT_UNSIGNED) return String(id);
  if (typeof id === 'string' && isDecimalId(id)) return id;
  throw new CdcInvalidError(`after.id: expected a positive integer within BIGINT UNSIGNED (exact) or its decimal string, got ${describe(id)}`);
}

function expireAtOf(row: CdcRow, change: CdcChange, image: string): number {
  const raw = row['expire_time'];
  if (raw === undefined || raw === null) throw new CdcInvalidError(`${image}.expire_time: missing`);
  let ms: number;
  try {
    // A bigint here is an integer beyond 2^53: a NanoTimestamp (anything else is out of range).
    // decodeDebeziumInstant takes the double JSON.parse used to give (Number() rounds the same
    // way) and floors it to ms, as before.
    ms = decodeDebeziumInstant(typeof raw === 'bigint' ? Number(raw) : raw, change.fieldSchemas['expire_time']);
  } catch (err) {
    if (!(err instanceof CdcInvalidError)) throw err;
    throw new CdcInvalidError(`${image}.expire_time: ${err.message}`, err.details);
  }
  // Entries carry non-negative times (see the format below); no real deadline precedes 1970.
  if (ms < 0) throw new CdcInvalidError(`${image}.expire_time: before 1970 (${ms} ms)`, { value: raw });
  return ms;
}

// ---- wire format ---------------------------------------------------------------------------
// Compact JSON with a version field. Our own format, but bytes on a topic can still be bad
// (a bug, a foreign producer), so decoding checks everything and rejects unknown keys: a new
// field means a new `v`.

const ENTRY_KEYS = ['v', 'entity', 'id', 'expireAtMs'] as const;

export function encodeBucketEntry(e: BucketEntry): Buffer {
  // Encode only what decode accepts, so a bug surfaces here rather than in a DLQ downstream.
  const checked = checkEntry(e);
  return Buffer.from(JSON.stringify({ v: checked.v, entity: checked.entity, id: checked.id, expireAtMs: checked.expireAtMs }));
}

export function decodeBucketEntry(buf: Buffer | null): BucketEntry {
  if (buf === null) throw new CdcInvalidError('bucket entry: value is null');
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new CdcInvalidError('bucket entry: not JSON', { error: err instanceof Error ? err.message : String(err) });
  }
  return checkEntry(parsed);
}

function checkEntry(x: unknown): BucketEntry {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw new CdcInvalidError('bucket entry: not an object');
  const o = x as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !(ENTRY_KEYS as readonly string[]).includes(k));
  if (extra.length > 0) throw new CdcInvalidError(`bucket entry: unknown keys ${extra.join(', ')}`);
  if (o['v'] !== 1) throw new CdcInvalidError(`bucket entry: unsupported v ${describe(o['v'])}`);
  const entity = o['entity'];
  if (entity !== 'coupon' && entity !== 'order') throw new CdcInvalidError(`bucket entry: unknown entity ${describe(entity)}`);
  const id = o['id'];
  if (typeof id !== 'string' || !isDecimalId(id)) throw new CdcInvalidError(`bucket entry: id is not a decimal id: ${describe(id)}`);
  const expireAtMs = o['expireAtMs'];
  if (typeof expireAtMs !== 'number' || !Number.isSafeInteger(expireAtMs) || expireAtMs < 0) {
    throw new CdcInvalidError(`bucket entry: expireAtMs is not a non-negative integer: ${describe(expireAtMs)}`);
  }
  return Object.freeze({ v: 1, entity, id, expireAtMs });
}

/** Canonical (no sign, no leading zeros) so one row has one id string, within BIGINT UNSIGNED. */
function isDecimalId(s: string): boolean {
  return /^[1-9][0-9]{0,19}$/.test(s) && BigInt(s) <= MAX_BIGINT_UNSIGNED;
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function describe(v: unknown): string {
  if (typeof v === 'bigint') return String(v);
  return v === undefined ? 'undefined' : typeof v === 'string' || typeof v === 'number' ? JSON.stringify(v) : typeName(v);
}
