/**
 * Events for the publish tests, with the payload of core/events.ts transitionEvent (and its
 * reminder and digest kin), as the expiry transaction hands them to its OutboxWriter, and rows
 * of them written to event_outbox through one (publish/outbox-writer.ts: encoded, as the expirer
 * writes them). Not a test file: shared by the tests beside it.
 */
import { join } from 'node:path';
import type { Knex } from 'knex';
import { findEvent, transitionOf, type EntityCatalogue, type EventSpec } from '../../../src/core/entity-catalogue';
import { digestEvents, reminderEvent, transitionEvent, type ColumnValue, type ExpiryPath } from '../../../src/core/events';
import { defaultEventTopic } from '../../../src/core/event-catalogue';
import type { OutboxInsert, OutboxWriter } from '../../../src/publish/outbox-writer';
import type { DlqWriter } from '../../../src/kafka/dlq-writer';
import { loadEntities } from '../../../src/ops/load-entities';
import { deadLetterRejectedEvents } from '../../../src/publish/dead-letter-events';
import { eventWriter } from '../../support/event-writer';
import { uniqueName } from '../../support/stack';

/** The default entities file (today's coupons and orders), as the expirer reads it. */
export const catalogue = loadEntities(join(__dirname, '../../../entities/default.json'));

export function eventSpec(type: string): EventSpec {
  const spec = findEvent(catalogue, type);
  if (spec === undefined) throw new RangeError(`no event ${type} in ${catalogue.source}`);
  return spec;
}

/**
 * A fresh topic per event of `c` (default: the default catalogue), named after the event type
 * and `label`: what eventTopics gives for a topology, unique to the test.
 */
export function uniqueEventTopics(label: string, c: Pick<EntityCatalogue, 'events'> = catalogue): Record<string, string> {
  return Object.fromEntries(c.events.map((e) => [e.type, uniqueName(`tb-${label}-${e.type.toLowerCase().replace(/_/g, '-')}`)]));
}

/**
 * An OutboxWriter for `c` (default: the default catalogue) under a topic prefix of its own
 * (test/support/event-writer.ts: its schemas registered first), and the topic of each event
 * type it writes to. `deadLetters`: where events the encoder rejects go, as the expirer sends
 * them (publish/dead-letter-events.ts); without it they fail the transaction.
 */
export async function prefixedWriter(
  db: Knex,
  label: string,
  opts: Readonly<{ catalogue?: EntityCatalogue; deadLetters?: DlqWriter }> = {},
): Promise<{ write: OutboxWriter; topics: Record<string, string> }> {
  const c = opts.catalogue ?? catalogue;
  const prefix = uniqueName(`tb-${label}`);
  const topics = Object.fromEntries(c.events.map((e) => [e.type, defaultEventTopic({ prefix }, e.type)]));
  const rejected = opts.deadLetters === undefined ? undefined : deadLetterRejectedEvents(opts.deadLetters, topics, Date.now);
  return { write: await eventWriter(db, c, { prefix, rejected }), topics };
}

/** One event as a transition hands it to the OutboxWriter. */
export type EventInsert = OutboxInsert;

/**
 * The event the expirer writes when `entity`'s `transition` moves row `id`. `version` is the
 * row's version after the transition; `columns` the locked row's other values.
 */
export function eventInsert(
  entity: string,
  transition: string,
  id: string,
  o: Readonly<{ dueAtMs: number; occurredAtMs: number; path?: ExpiryPath; version?: number; columns?: Record<string, ColumnValue>; effects?: boolean[] }>,
): EventInsert {
  const t = transitionOf(catalogue, entity, transition);
  // The transition increments version: the locked row held the one before.
  const columns = { user_id: '9', coupon_id: null, ...o.columns, version: (o.version ?? 1) - 1 };
  const row = { id, status: t.from[0]!, dueAtMs: o.dueAtMs, columns };
  const event = transitionEvent(t, row, { occurredAtMs: o.occurredAtMs, path: o.path ?? 'stream', effects: o.effects ?? t.effects.map(() => false) });
  return { event, entityType: entity, entityId: id };
}

/** The event of coupon `id`'s reminder `beforeMs` before its due time, as the reminder batch writes it. */
export function couponReminderInsert(id: string, o: Readonly<{ dueAtMs: number; beforeMs: number; userId: string; faceValue: string }>): EventInsert {
  const t = transitionOf(catalogue, 'coupon', 'expired');
  const row = { id, status: 'ACTIVE', expireAtMs: o.dueAtMs, columns: { user_id: o.userId, face_value: o.faceValue } };
  const event = reminderEvent(t, eventSpec('COUPON_EXPIRING_SOON'), row, { occurredAtMs: o.dueAtMs - o.beforeMs + 5, path: 'stream', beforeMs: o.beforeMs });
  return { event, entityType: 'coupon', entityId: id };
}

/** The event of user `userId`'s digest of `coupons` (id → face value), all due at `dueAtMs`. */
export function couponDigestInsert(
  userId: string,
  coupons: Readonly<Record<string, string>>,
  o: Readonly<{ dueAtMs: number; beforeMs: number; windowStartMs: number }>,
): EventInsert {
  const t = transitionOf(catalogue, 'coupon', 'expired');
  const rows = Object.entries(coupons).map(([id, faceValue]) => ({
    id,
    status: 'ACTIVE',
    expireAtMs: o.dueAtMs,
    columns: { user_id: userId, face_value: faceValue },
  }));
  const [event] = digestEvents(t, eventSpec('USER_COUPONS_EXPIRING_SOON'), rows, {
    occurredAtMs: o.windowStartMs + 5,
    path: 'stream',
    beforeMs: o.beforeMs,
    user: userId,
    windowStartMs: o.windowStartMs,
  });
  return { event: event!, entityType: 'coupon', entityId: userId };
}

let dueAt = Date.UTC(2031, 0, 1);

/** The event the expirer writes when coupon `id`, due at `dueAtMs`, expires `lateMs` after it. */
export function couponExpiredInsert(id: string, dueAtMs: number, lateMs: number): EventInsert {
  return eventInsert('coupon', 'expired', id, { dueAtMs, occurredAtMs: dueAtMs + lateMs });
}

/** The event of an order cancelled with the coupon it held (or none), released when it held one. */
export function orderCancelledInsert(
  id: string,
  couponId: string | null,
  o: Readonly<{ dueAtMs: number; occurredAtMs: number; path?: ExpiryPath; version?: number; userId?: string }>,
): EventInsert {
  return eventInsert('order', 'cancelled', id, { ...o, columns: { coupon_id: couponId, user_id: o.userId ?? '9' }, effects: [couponId !== null] });
}

/**
 * A COUPON_EXPIRED event per entity id, in the given order, written through `write` (one
 * transaction, ids in that order). The same entity id twice is a coupon that expired twice (each
 * time a new expire_time). Returns the event_outbox ids, in order.
 */
export async function insertCouponEvents(db: Knex, write: OutboxWriter, entityIds: readonly string[]): Promise<string[]> {
  const rows = entityIds.map((id) => couponExpiredInsert(id, (dueAt += 1), 5));
  // In slices: one write per 1000 rows, as the expirer's batches are.
  await db.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += 1_000) await write(trx, rows.slice(i, i + 1_000));
  });
  const keys = rows.map((r) => r.event.event_key);
  const found = (await db('event_outbox').whereIn('event_key', keys).select('id', 'event_key')) as Array<{ id: number | string; event_key: string }>;
  const idByKey = new Map(found.map((r) => [r.event_key, String(r.id)]));
  return keys.map((k) => idByKey.get(k)!);
}

/** Distinct entity ids, unique per call (so a test's rows never share an entity by accident). */
let nextEntity = 5_000_000 + Math.floor(Math.random() * 1_000_000) * 1_000;
export function entityIds(n: number): string[] {
  return Array.from({ length: n }, () => String((nextEntity += 1)));
}
