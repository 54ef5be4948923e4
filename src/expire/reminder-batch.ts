/**
 * The reminder transaction (docs/reminders.md): one batch of one transition's reminders, on one
 * table, in one transaction that changes no row.
 *
 *   read the database clock (NOW(3))
 *   → without a digest: read the batch's rows by primary key; per entry, sent or skipped
 *     (core/reminder-plan.ts planReminders)
 *   → with a digest: per fire point and window, read the users' rows of the window through the
 *     digest's index; one digest per user with any (planDigests)
 *   → INSERT IGNORE one outbox row per reminder or digest, on its event_key: a replayed batch
 *     writes nothing new
 *
 * The outcome speaks the expiry's language to the sink (hold/expirer-sink.ts): entries not yet
 * due go back to the queue, the rest are done; nothing is "transitioned", so the transition
 * metrics never count a reminder. What was sent and skipped goes to the observer.
 */
import type { Knex } from 'knex';
import { batchKindOf, reminderMatches, type ReminderSkip } from '../core/bucket-entry';
import {
  entityOf,
  isDigested,
  locationOf,
  MAIN_DATABASE,
  type EntityCatalogue,
  type EventSpec,
  type Location,
  type Transition,
} from '../core/entity-catalogue';
import { digestEvents, reminderEvent, type ExpiryPath } from '../core/events';
import { planDigests, planReminders, type ReminderEntry } from '../core/reminder-plan';
import type { BatchOutcome } from './batch-outcome';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { Metrics } from '../ops/metrics';
import type { OutboxInsert, OutboxWriter } from '../publish/outbox-writer';
import { readDbNow } from '../db/sql/read-db-now';
import { readDigestRows, type ReadDigestRows } from './sql/read-digest-rows';
import { readRemindedRows, type ReadRemindedRows } from './sql/read-reminded-rows';

/** What a committed batch did, per transition (the entity and transition are metric labels). */
export type ReminderObserver = Partial<{
  /** Reminders (or digests) written, each `latenessMs` after its fire time by the database clock. */
  sent(transition: Transition, latenessMs: readonly number[]): void;
  skipped(transition: Transition, reason: ReminderSkip, count: number): void;
  /** One digest of `size` rows. */
  digest(transition: Transition, size: number): void;
}>;

export type RunReminders = (transition: Transition, entries: readonly ScheduledEntry[], path: ExpiryPath, location?: Location) => Promise<BatchOutcome>;
export type ReminderBatches = Readonly<{ run: RunReminders }>;

/** True when the batch's entries are reminders (they all are, or none: hold/expirer-sink.ts groups them apart). */
export function isReminderBatch(entries: readonly ScheduledEntry[]): boolean {
  return entries[0] !== undefined && batchKindOf(entries[0]) !== 'transition';
}

/** The metrics of what reminder batches did. */
export function reminderObserver(metrics: Metrics): ReminderObserver {
  return {
    sent: (t, lateness) => {
      metrics.remindersSent.inc({ entity: t.entity, transition: t.name }, lateness.length);
      for (const ms of lateness) metrics.reminderLateness.observe({ entity: t.entity }, Math.max(0, ms) / 1000);
    },
    skipped: (t, reason, n) => metrics.remindersSkipped.inc({ entity: t.entity, transition: t.name, reason }, n),
    digest: (t, size) => metrics.digestSize.observe({ entity: t.entity }, size),
  };
}

/** Per transition and table: its reads, and the fire points sent one row at a time (planReminders's `firePointsMs`). */
type Compiled = Readonly<{ byId?: ReadRemindedRows; byUser?: ReadDigestRows; firePointsMs: readonly number[] }>;

export function createReminderBatches(
  pools: Readonly<Record<string, Knex>>,
  catalogue: EntityCatalogue,
  opts: Readonly<{ outbox: OutboxWriter; observer?: ReminderObserver }>,
): ReminderBatches {
  const { outbox } = opts;
  const compiled = new Map<string, Compiled>();
  for (const t of catalogue.transitions) {
    if (t.reminders === null) continue;
    const entity = entityOf(catalogue, t.entity);
    for (const location of entity.locations) {
      if (pools[location.database] === undefined) throw new RangeError(`no pool for database '${location.database}' (${t.ref})`);
      const { event, digest } = t.reminders;
      const columnsOf = (spec: EventSpec) => spec.fields.flatMap((f) => (f.source === 'column' ? [f.column] : []));
      compiled.set(`${t.ref}@${location.key}`, {
        firePointsMs: undigestedFirePoints(t),
        ...(event !== null && { byId: readRemindedRows(entity, t, location, columnsOf(event)) }),
        ...(digest !== null && { byUser: readDigestRows(entity, t, location, columnsOf(digest.event)) }),
      });
    }
  }
  return {
    run: async (transition, scheduled, path, location) => {
      const at = location ?? locationOf(entityOf(catalogue, transition.entity), undefined);
      const all = scheduled.map(asReminder);
      // Entries of fire points the file no longer declares as they were (bucket-entry.ts reminderMatches).
      const entries = all.filter((e) => reminderMatches(transition, e));
      const reconfigured = all.length - entries.length;
      if (reconfigured > 0) opts.observer?.skipped?.(transition, 'reconfigured', reconfigured);
      if (entries.length === 0) return { transitioned: [], notYetDue: [], stale: all, dbNowMs: Date.now(), reminders: true };
      const c = compiled.get(`${transition.ref}@${at.key}`);
      if (c === undefined) throw new RangeError(`no reminders of '${transition.ref}' at ${at.key} in ${catalogue.source}`);
      const db = pools[at.database] ?? pools[MAIN_DATABASE]!;
      // A batch is all digested fire points or none (hold/expirer-sink.ts groups them apart), and
      // reminderMatches kept only entries whose kind the file declares.
      const digested = batchKindOf(entries[0]!) === 'digest';
      const result = await db.transaction((trx) =>
        digested ? digest(trx, transition, c.byUser!, entries, path, outbox) : remind(trx, transition, c.byId!, c.firePointsMs, entries, path, outbox),
      );
      // After the commit: what now exists.
      if (result.lateness.length > 0) opts.observer?.sent?.(transition, result.lateness);
      for (const [reason, n] of result.skipped) opts.observer?.skipped?.(transition, reason, n);
      for (const size of result.digests) opts.observer?.digest?.(transition, size);
      const later = new Set(result.notYetDue.map((n) => n.entry));
      return { transitioned: [], notYetDue: result.notYetDue, stale: all.filter((e) => !later.has(e)), dbNowMs: result.dbNowMs, reminders: true };
    },
  };
}

function asReminder(e: ScheduledEntry): ReminderEntry {
  if (e.remind === undefined) throw new RangeError(`entry ${e.id} is not a reminder`);
  return e as ReminderEntry;
}

type Result = {
  dbNowMs: number;
  notYetDue: ReadonlyArray<Readonly<{ entry: ReminderEntry; retryInMs: number }>>;
  lateness: number[];
  skipped: Map<ReminderSkip, number>;
  digests: number[];
};

async function remind(
  trx: Knex.Transaction,
  t: Transition,
  read: ReadRemindedRows,
  firePointsMs: readonly number[],
  entries: readonly ReminderEntry[],
  path: ExpiryPath,
  outbox: OutboxWriter,
): Promise<Result> {
  const dbNowMs = await readDbNow(trx);
  const ready = entries.filter((e) => e.expireAtMs <= dbNowMs);
  const rows = await read.run(trx, [...new Set(ready.map((e) => e.id))]);
  const plan = planReminders(entries, rows, dbNowMs, firePointsMs);
  const spec = t.reminders!.event!;
  const inserts: OutboxInsert[] = plan.send.map(({ entry, row }) => ({
    event: reminderEvent(t, spec, row, { occurredAtMs: dbNowMs, path, beforeMs: entry.remind.beforeMs }),
    entityType: t.entity,
    entityId: row.id,
  }));
  await outbox(trx, inserts);
  const skipped = new Map<ReminderSkip, number>();
  for (const s of plan.skipped) skipped.set(s.reason, (skipped.get(s.reason) ?? 0) + 1);
  return { dbNowMs, notYetDue: plan.notYetDue, lateness: plan.send.map((s) => dbNowMs - s.entry.expireAtMs), skipped, digests: [] };
}

/** The transition's fire points sent one row at a time (a digested one is another event, on its own topic). */
function undigestedFirePoints(t: Transition): number[] {
  return t.reminders!.beforeMs.filter((b) => !isDigested(t, b));
}

async function digest(
  trx: Knex.Transaction,
  t: Transition,
  read: ReadDigestRows,
  entries: readonly ReminderEntry[],
  path: ExpiryPath,
  outbox: OutboxWriter,
): Promise<Result> {
  const dbNowMs = await readDbNow(trx);
  const plan = planDigests(entries, dbNowMs);
  const { windowMs, event: spec } = t.reminders!.digest!;
  const inserts: OutboxInsert[] = [];
  const lateness: number[] = [];
  const digests: number[] = [];
  let empty = 0;
  for (const g of plan.groups) {
    // The window's fire points [start, start + window) are due times [start + before, start + window + before).
    const byUser = await read.run(trx, g.users, { fromMs: g.windowStartMs + g.beforeMs, untilMs: g.windowStartMs + windowMs + g.beforeMs, dbNowMs });
    for (const user of g.users) {
      const rows = byUser.get(user);
      if (rows === undefined || rows.length === 0) {
        empty += g.entries.filter((e) => e.remind.user === user).length;
        continue;
      }
      for (const event of digestEvents(t, spec, rows, { occurredAtMs: dbNowMs, path, beforeMs: g.beforeMs, user, windowStartMs: g.windowStartMs }))
        inserts.push({ event, entityType: t.entity, entityId: user });
      lateness.push(dbNowMs - g.windowStartMs);
      digests.push(rows.length);
    }
  }
  await outbox(trx, inserts);
  const skipped = new Map<ReminderSkip, number>(empty > 0 ? [['not_expirable', empty]] : []);
  return { dbNowMs, notYetDue: plan.notYetDue, lateness, skipped, digests };
}
