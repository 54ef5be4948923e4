/**
 * The expiry transaction, for any transition of the entity catalogue: one batch of one
 * transition in one transaction.
 *
 *   lock the batch's rows in a from-state (by primary key, in id order)
 *   → read the database clock (NOW(3))
 *   → decide (core/expiry-plan.ts): due, not yet due (I2), stale
 *   → guarded UPDATE of the due rows: from → to, with the transition's assignments
 *   → each effect: lock the other entity's rows held by the due rows, then move them
 *   → one event_outbox row per transitioned row (I4), written by `opts.outbox`
 *     (outbox-writer.ts: encoded, for the outbox connector), under a key of
 *     that transition alone; fewer rows taken than moved rolls it all back (EventNotWritten)
 *
 * The event exists if and only if the transition committed: the UPDATE must have changed every
 * row the plan found due, or the transaction rolls back (GuardMismatch) rather than write an
 * event for a row it did not move. Re-running the same batch is harmless: rows already moved are
 * stale and their event_key is already in the outbox.
 *
 * Lock order: the transition's own rows, then each effect's rows (an order, then its coupons),
 * the same in every batch, so batches cannot deadlock one another. An effect's rows flow back
 * through CDC and are scheduled (and moved if overdue) there.
 *
 * Every statement's text is built once per transition, here at construction (identifiers quoted
 * by quoteId, every value bound); transitionStatements gives the texts to the plan tests.
 */
import type { Knex } from 'knex';
import { entityOf, locationOf, MAIN_DATABASE, type EntityCatalogue, type Location, type Transition } from '../core/entity-catalogue';
import { planExpiry, type ScheduledEntry } from '../core/expiry-plan';
import { eventBuilder, type EventBuilder, type ExpiryPath } from '../core/events';
import { TimebucketError } from '../core/errors';
import { type BatchOutcome, outcomeOf } from './batch-outcome';
import { applyEffect, type ApplyEffect } from './sql/apply-effect';
import type { OutboxWriter } from '../publish/outbox-writer';
import { lockEffectRows, type LockEffectRows } from './sql/lock-effect-rows';
import { lockTransitionRows, type LockTransitionRows } from './sql/lock-transition-rows';
import { readDbNow } from '../db/sql/read-db-now';
import { transitionRows, type TransitionRows } from './sql/transition-rows';

/**
 * One batch: rows of ONE table (`location`) of the transition's entity, on that table's
 * database. `location` may be left out for an entity with one table (not for a spread one).
 */
export type RunTransition = (transition: Transition, entries: readonly ScheduledEntry[], path: ExpiryPath, location?: Location) => Promise<BatchOutcome>;

export type TransitionBatches = Readonly<{ run: RunTransition }>;

/** The SQL text of each statement of a transition's transaction (the outbox insert aside). */
export type TransitionStatements = Readonly<{
  lock: string;
  update: string;
  effects: ReadonlyArray<Readonly<{ lock: string; update: string }>>;
}>;

type Compiled = Readonly<{
  transition: Transition;
  lock: LockTransitionRows;
  update: TransitionRows;
  effects: ReadonlyArray<Readonly<{ lock: LockEffectRows; apply: ApplyEffect }>>;
  event: EventBuilder;
}>;

/**
 * The guarded UPDATE moved fewer rows than the plan found due: a due column finer than the
 * milliseconds a Date holds (DATETIME(6)) can look due to the plan a moment before it is. A
 * moment later it is due, so it is retriable; nothing was written.
 */
export class GuardMismatch extends TimebucketError {
  constructor(ref: string, due: number, moved: number) {
    super('GUARD_MISMATCH', `${ref}: the guarded update moved ${moved} of ${due} due rows; rolled back`, { retriable: true, details: { due, moved } });
  }
}

/**
 * The outbox took fewer events than the transaction moved rows: a key was already there. Keys
 * carry the transaction's database time (eventKeyOf), so only a row moved twice within one
 * millisecond could do it; the transaction rolls back rather than move a row without its event
 * (I4), and a retry runs at another time, under another key.
 */
export class EventNotWritten extends TimebucketError {
  constructor(ref: string, due: number, written: number) {
    super('EVENT_NOT_WRITTEN', `${ref}: the outbox took ${written} of ${due} events (a key already there); rolled back`, {
      retriable: true,
      details: { due, written },
    });
  }
}

/**
 * `pools`: a pool per database the catalogue names (config.databases), or the main database's
 * alone. A batch runs on the database of its location, and its outbox rows go into that
 * database's outbox (one transaction).
 */
export function createTransitionBatches(
  pools: Knex | Readonly<Record<string, Knex>>,
  catalogue: EntityCatalogue,
  opts: Readonly<{ outbox: OutboxWriter; onEventsWritten?: (events: number) => void }>,
): TransitionBatches {
  const { outbox } = opts;
  const dbs: Readonly<Record<string, Knex>> = isPool(pools) ? { [MAIN_DATABASE]: pools } : pools;
  const compiled = new Map<string, Compiled>();
  for (const t of catalogue.transitions) {
    for (const location of entityOf(catalogue, t.entity).locations) {
      if (dbs[location.database] === undefined) throw new RangeError(`no pool for database '${location.database}' (${t.ref})`);
      compiled.set(`${t.ref}@${location.key}`, compile(catalogue, t, location));
    }
  }
  return {
    run: async (transition, entries, path, location) => {
      const at = location ?? locationOf(entityOf(catalogue, transition.entity), undefined);
      const c = compiled.get(`${transition.ref}@${at.key}`);
      if (c === undefined) throw new RangeError(`no transition '${transition.ref}' at ${at.key} in ${catalogue.source}`);
      const { outcome, written } = await runBatch(dbs[at.database]!, c, entries, path, outbox);
      // After the commit: the events that now exist.
      if (written > 0) opts.onEventsWritten?.(written);
      return outcome;
    },
  };
}

function isPool(p: Knex | Readonly<Record<string, Knex>>): p is Knex {
  return typeof (p as Partial<Knex>).transaction === 'function';
}

/** The statements of `transition` on `location` (default: the entity's first table). */
export function transitionStatements(catalogue: EntityCatalogue, transition: Transition, location?: Location): TransitionStatements {
  const c = compile(catalogue, transition, location ?? entityOf(catalogue, transition.entity).locations[0]!);
  return { lock: c.lock.sql, update: c.update.sql, effects: c.effects.map((fx) => ({ lock: fx.lock.sql, update: fx.apply.sql })) };
}

function compile(catalogue: EntityCatalogue, t: Transition, location: Location): Compiled {
  const entity = entityOf(catalogue, t.entity);
  return {
    transition: t,
    lock: lockTransitionRows(entity, t, location),
    update: transitionRows(entity, t, location),
    effects: t.effects.map((fx) => ({ lock: lockEffectRows(catalogue, fx), apply: applyEffect(catalogue, fx) })),
    event: eventBuilder(t),
  };
}

async function runBatch(
  db: Knex,
  c: Compiled,
  entries: readonly ScheduledEntry[],
  path: ExpiryPath,
  outbox: OutboxWriter,
): Promise<{ outcome: BatchOutcome; written: number }> {
  const t = c.transition;
  return db.transaction(async (trx) => {
    const rows = await c.lock.run(trx, [...new Set(entries.map((e) => e.id))]);
    const dbNowMs = await readDbNow(trx);
    const plan = planExpiry(entries, rows, dbNowMs);
    const dueIds = plan.due.map((r) => r.id);
    const moved = await c.update.run(trx, dueIds, dbNowMs);
    if (moved !== dueIds.length) throw new GuardMismatch(t.ref, dueIds.length, moved);
    // Per effect: the transitioned rows (by id) that it changed a row for.
    const touched: Array<ReadonlySet<string>> = [];
    for (const fx of c.effects) {
      const held = await fx.lock.run(trx, dueIds);
      await fx.apply.run(
        trx,
        held.map((r) => r.id),
        dbNowMs,
      );
      touched.push(new Set(held.map((r) => r.owner)));
    }
    const written = await outbox(
      trx,
      plan.due.map((r) => ({
        event: c.event(
          { id: r.id, status: r.status, dueAtMs: r.expireAtMs, columns: r.columns },
          { occurredAtMs: dbNowMs, path, effects: touched.map((s) => s.has(r.id)) },
        ),
        entityType: t.entity,
        entityId: r.id,
      })),
    );
    if (written !== plan.due.length) throw new EventNotWritten(t.ref, plan.due.length, written);
    return { outcome: outcomeOf(plan, dbNowMs), written };
  });
}
