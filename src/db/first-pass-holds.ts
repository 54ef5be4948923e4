/**
 * The transitions this process holds because their first pass was refused (core/first-pass-guard.ts,
 * db/check-entity-data.ts): a transition at one table, found at start or when a database that
 * did not answer then is checked (db/database-watch.ts).
 *
 * The guard exists to stop a mass transition, so it stops the transitions themselves, wherever
 * they come from: every path (the CDC stream, the connector's snapshot, `timebucket backfill`,
 * replay) reaches the expirer as entries and goes through `holdFirstPass`, and the scanner skips
 * a held transition's cursors (reconcile/compensation-scanner.ts), so none of its passes
 * completes and the guard stays armed for the next start. Every other transition, table, entity
 * and role runs: a process that stopped (exit 78) would stop them too, while the other processes'
 * paths moved the backlog anyway.
 *
 * Invariant: while held, no expiry transaction of the transition runs at that table. Its entries
 * are marked done without it (BatchOutcome.held), counted; nothing is lost, because the scanner
 * reads every overdue row in the from-states and moves them once the hold is lifted (a restart
 * with TB_ALLOW_LARGE_FIRST_PASS=true, or with the mapping fixed). Reminders are not held: they
 * move no row.
 */
import { entityOf, locationOf, type EntityCatalogue, type Location, type Transition } from '../core/entity-catalogue';
import type { ScheduledEntry } from '../core/expiry-plan';
import type { ExpiryPath } from '../core/events';
import type { BatchOutcome } from '../expire/batch-outcome';
import type { TransitionBatches } from '../expire/transition-batch';
import type { FirstPassHold } from './check-entity-data';

/** A hold as /readyz names it (cli/readiness.ts). */
export type HeldTransition = Readonly<{ transition: string; database: string; table: string; reason: string }>;

export class FirstPassHolds {
  private readonly held = new Map<string, FirstPassHold>();

  /** `onChange`: every hold after a change (the gauge). */
  constructor(private readonly onChange: (held: readonly FirstPassHold[]) => void = () => undefined) {}

  add(holds: readonly FirstPassHold[]): void {
    if (holds.length === 0) return;
    for (const h of holds) this.held.set(keyOf(h.transition, h.location), h);
    this.onChange([...this.held.values()]);
  }

  isHeld(transition: Transition, location: Location): boolean {
    return this.held.has(keyOf(transition, location));
  }

  list(): HeldTransition[] {
    return [...this.held.values()].map((h) => ({ transition: h.transition.ref, database: h.location.database, table: h.location.table, reason: h.problem }));
  }
}

function keyOf(transition: Transition, location: Location): string {
  return `${transition.ref}@${location.key}`;
}

/**
 * `batches` not running a held transition's batches: their entries come back as `held`, and
 * `onHeld` counts them by entity. `now`: the process clock, the outcome's dbNowMs (nothing ran).
 */
export function holdFirstPass(
  batches: TransitionBatches,
  catalogue: EntityCatalogue,
  holds: Pick<FirstPassHolds, 'isHeld'>,
  opts: Readonly<{ onHeld: (entity: string, entries: number) => void; now: () => number }>,
): TransitionBatches {
  return {
    run: async (transition: Transition, entries: readonly ScheduledEntry[], path: ExpiryPath, location?: Location): Promise<BatchOutcome> => {
      if (!holds.isHeld(transition, location ?? locationOf(entityOf(catalogue, transition.entity), undefined))) {
        return batches.run(transition, entries, path, location);
      }
      opts.onHeld(transition.entity, entries.length);
      return { transitioned: [], notYetDue: [], stale: [], held: entries, dbNowMs: opts.now() };
    },
  };
}

/** The gauge's values: per transition of the catalogue, the tables held (0 for the others). */
export function heldTablesByTransition(
  catalogue: EntityCatalogue,
  held: readonly FirstPassHold[],
): Array<{ entity: string; transition: string; tables: number }> {
  return catalogue.transitions.map((t) => ({ entity: t.entity, transition: t.name, tables: held.filter((h) => h.transition.ref === t.ref).length }));
}
