/**
 * The bucket entry on the wire (core/bucket-entry.ts plans the entries of a change): compact
 * JSON with a version field, encoded only as decode accepts it, decoded with every field checked
 * against the catalogue. A record that does not decode is the caller's to dead-letter (I5).
 *
 * Four wire versions, all read here and only here (WIRE_VERSIONS: each one's keys and the entries
 * it is written for). None is a relic that nothing writes: this encoder still writes each of them
 * (v1 an entity's first transition, v2 a later one, v3 a spread entity's, v4 a reminder), and a
 * ring holds entries up to its horizon ahead, written by the release before an upgrade
 * (docs/operations.md, "Upgrading": from the version with the polling relay, whose last builds
 * wrote all four). One version for every entry would change the bytes written today and strand
 * those in flight.
 *
 * Pure: no clock, no I/O.
 */
import type { BucketEntry, ReminderOf } from './bucket-entry';
import { findEntity, findLocation, isSpread, transitionOf, type EntityCatalogue, type Transition } from './entity-catalogue';
import { CdcInvalidError } from './errors';
import { describe, isDecimalId } from './field-checks';

// Compact JSON with a version field. Our own format, but bytes on a topic can still be bad
// (a bug, a foreign producer), so decoding checks everything and rejects unknown keys: a new
// field means a new `v`.
//   v1 { v, entity, id, expireAtMs }              the entity's FIRST transition: the bytes of
//                                                 every entry written before transitions were
//                                                 named, so old and new processes read each other's
//   v2 { v, entity, transition, id, expireAtMs }  any other transition
//   v3 { v, entity, transition, id, expireAtMs, at }  any transition of a spread entity (a table
//                                                 set or several databases): `at` is the row's
//                                                 location key, `<database>.<table>`
//   v4 { v, entity, transition, id, expireAtMs, dueAtMs, beforeMs[, at][, user] }  a reminder:
//                                                 expireAtMs its fire time; `at` as v3; `user`
//                                                 when the transition's reminders are digested
// Names are checked against the catalogue: an entry for a transition this process does not know
// cannot be expired here, and holding it would pin the partition; it goes to the DLQ (I5).
// Hence an entity's first transition must stay first in the file: moving another before it
// would re-label every v1 entry in flight.

type WireVersion = 1 | 2 | 3 | 4;

/** Each wire version: the keys it may carry, and whose entries it is written for (in messages). */
const WIRE_VERSIONS: Readonly<Record<WireVersion, Readonly<{ keys: ReadonlySet<string>; of: string }>>> = {
  1: { keys: new Set(['v', 'entity', 'id', 'expireAtMs']), of: 'first transition’s' },
  2: { keys: new Set(['v', 'entity', 'transition', 'id', 'expireAtMs']), of: 'later transition’s' },
  3: { keys: new Set(['v', 'entity', 'transition', 'id', 'expireAtMs', 'at']), of: 'spread entity’s' },
  4: { keys: new Set(['v', 'entity', 'transition', 'id', 'expireAtMs', 'dueAtMs', 'beforeMs', 'at', 'user']), of: 'reminder' },
};

const isWireVersion = (v: unknown): v is WireVersion => v === 1 || v === 2 || v === 3 || v === 4;

export function encodeBucketEntry(e: BucketEntry, catalogue: EntityCatalogue): Buffer {
  // Encode only what decode accepts, so a bug surfaces here rather than in a DLQ downstream.
  const { entity, transition, id, expireAtMs, at, remind } = e;
  const version = checkEntry({ entity, transition, id, expireAtMs, at }, catalogue);
  if (remind !== undefined) {
    checkReminder(transitionOf(catalogue, entity, transition), expireAtMs, remind);
    return Buffer.from(
      JSON.stringify({
        v: 4,
        entity,
        transition,
        id,
        expireAtMs,
        dueAtMs: remind.dueAtMs,
        beforeMs: remind.beforeMs,
        ...(at === undefined ? {} : { at }),
        ...(remind.user === undefined ? {} : { user: remind.user }),
      }),
    );
  }
  const wire =
    version === 1
      ? { v: 1, entity, id, expireAtMs }
      : version === 2
        ? { v: 2, entity, transition, id, expireAtMs }
        : { v: 3, entity, transition, id, expireAtMs, at };
  return Buffer.from(JSON.stringify(wire));
}

export function decodeBucketEntry(buf: Buffer | null, catalogue: EntityCatalogue): BucketEntry {
  if (buf === null) throw new CdcInvalidError('bucket entry: value is null');
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new CdcInvalidError('bucket entry: not JSON', { error: err instanceof Error ? err.message : String(err) });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CdcInvalidError('bucket entry: not an object');
  const o = parsed as Record<string, unknown>;
  const v = o['v'];
  if (!isWireVersion(v)) throw new CdcInvalidError(`bucket entry: unsupported v ${describe(v)}`);
  // Per record: a loop over the keys, no array built unless one is unknown.
  const allowed = WIRE_VERSIONS[v].keys;
  for (const k in o) {
    if (!allowed.has(k))
      throw new CdcInvalidError(
        `bucket entry: unknown keys ${Object.keys(o)
          .filter((x) => !allowed.has(x))
          .join(', ')}`,
      );
  }
  const entity = o['entity'];
  // v1 means the entity's first transition (checkEntry checks the entity before using it).
  const transition = v === 1 ? (typeof entity === 'string' ? findEntity(catalogue, entity)?.transitions[0]?.name : undefined) : o['transition'];
  if (v === 4) return decodeReminder(o, catalogue);
  const entry =
    v === 3 ? { entity, transition, id: o['id'], expireAtMs: o['expireAtMs'], at: o['at'] } : { entity, transition, id: o['id'], expireAtMs: o['expireAtMs'] };
  const version = checkEntry(entry, catalogue);
  // v2 may name the first transition too (it names any); v3 and only v3 is a spread entity's.
  if (version !== v && !(v === 2 && version === 1)) throw new CdcInvalidError(`bucket entry: v ${v} is not the version of a ${WIRE_VERSIONS[v].of} entry`);
  return Object.freeze(entry as BucketEntry);
}

function decodeReminder(o: Record<string, unknown>, catalogue: EntityCatalogue): BucketEntry {
  const base = {
    entity: o['entity'],
    transition: o['transition'],
    id: o['id'],
    expireAtMs: o['expireAtMs'],
    ...(o['at'] === undefined ? {} : { at: o['at'] }),
  };
  checkEntry(base, catalogue);
  const remind = { dueAtMs: o['dueAtMs'], beforeMs: o['beforeMs'], ...(o['user'] === undefined ? {} : { user: o['user'] }) };
  checkReminder(transitionOf(catalogue, base.entity as string, base.transition as string), base.expireAtMs as number, remind);
  return Object.freeze({ ...(base as Omit<BucketEntry, 'remind'>), remind: Object.freeze(remind as ReminderOf) });
}

/**
 * A reminder the catalogue declares: one of the transition's fire points, fired where
 * reminderFireAt puts it, with a user exactly when the transition digests. Anything else was not
 * written by this catalogue (a reminder removed from the file, a foreign producer): poison.
 */
function checkReminder(t: Transition, expireAtMs: number, r: Readonly<{ dueAtMs: unknown; beforeMs: unknown; user?: unknown }>): void {
  const what = `bucket entry: reminder of ${t.ref}`;
  const { dueAtMs, beforeMs, user } = r;
  if (typeof dueAtMs !== 'number' || !Number.isSafeInteger(dueAtMs) || dueAtMs < 0)
    throw new CdcInvalidError(`${what}: dueAtMs is not a non-negative integer: ${describe(dueAtMs)}`);
  if (typeof beforeMs !== 'number' || !Number.isSafeInteger(beforeMs) || beforeMs <= 0)
    throw new CdcInvalidError(`${what}: beforeMs is not a positive integer: ${describe(beforeMs)}`);
  if (expireAtMs > dueAtMs - beforeMs) throw new CdcInvalidError(`${what}: fires at ${expireAtMs}, after its fire point ${dueAtMs - beforeMs}`);
  if (user !== undefined && (typeof user !== 'string' || !isDecimalId(user))) throw new CdcInvalidError(`${what}: user is not a user id: ${describe(user)}`);
}

/**
 * Throws unless `e` is a valid entry of the catalogue; returns the wire version it is written in:
 * 3 for a spread entity (its location checked), else 1 for the entity's first transition, 2 otherwise.
 */
function checkEntry(e: Record<Exclude<keyof BucketEntry, 'at' | 'remind'>, unknown> & { at?: unknown }, catalogue: EntityCatalogue): 1 | 2 | 3 {
  const entity = typeof e.entity === 'string' ? findEntity(catalogue, e.entity) : undefined;
  if (entity === undefined) throw new CdcInvalidError(`bucket entry: unknown entity ${describe(e.entity)}`);
  const index = entity.transitions.findIndex((t) => t.name === e.transition);
  if (index < 0) throw new CdcInvalidError(`bucket entry: unknown transition ${describe(e.transition)} of ${entity.name}`);
  if (typeof e.id !== 'string' || !isDecimalId(e.id)) throw new CdcInvalidError(`bucket entry: id is not a decimal id: ${describe(e.id)}`);
  const ms = e.expireAtMs;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
    throw new CdcInvalidError(`bucket entry: expireAtMs is not a non-negative integer: ${describe(ms)}`);
  }
  if (isSpread(entity)) {
    if (typeof e.at !== 'string' || findLocation(entity, e.at) === undefined)
      throw new CdcInvalidError(`bucket entry: ${describe(e.at)} is not a location of ${entity.name}`);
    return 3;
  }
  if (e.at !== undefined) throw new CdcInvalidError(`bucket entry: ${entity.name} lives in one table; the entry names a location`);
  return index === 0 ? 1 : 2;
}
