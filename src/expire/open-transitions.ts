/**
 * The batch transactions of a process, as main.ts wires them: the transitions' (and reminders')
 * over the outbox writer of their events, behind the holds that keep a batch from running
 * (db/database-watch.ts holdUntilChecked, db/first-pass-holds.ts holdFirstPass).
 */
import type { Config } from '../config';
import type { Clock } from '../core/clock';
import type { SchemaInfo } from '../core/column-info';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { eventTopics } from '../core/event-catalogue';
import type { Topology } from '../core/topology';
import { holdUntilChecked, type DatabaseWatch } from '../db/database-watch';
import { holdFirstPass, type FirstPassHolds } from '../db/first-pass-holds';
import type { Db } from '../db/knex';
import type { DlqWriter } from '../kafka/dlq-writer';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import { deadLetterRejectedEvents } from '../publish/dead-letter-events';
import { openOutboxWriter } from '../publish/open-outbox-writer';
import { writesNoEvents } from '../publish/outbox-writer';
import type { Role } from '../roles';
import { resource } from '../runtime/group';
import type { Component } from '../runtime/lifecycle';
import { createReminderBatches, reminderObserver } from './reminder-batch';
import { createTransitionBatches } from './transition-batch';

/** What of main.ts's wiring this reads. */
export type TransitionWiring = Readonly<{
  config: Config;
  topology: Topology;
  opts: Readonly<{ roles: readonly Role[]; logger: Logger; catalogue: EntityCatalogue }>;
  clock: Clock;
  started: <C extends Component>(part: string, component: C) => Promise<C>;
}>;

/**
 * The transitions' and the reminders' batch transactions, held while their database is unchecked
 * (and a transition's at a table where its first pass is held: db/first-pass-holds.ts), and the outbox writer of the events they write. Only the roles that run transitions write events
 * (encoded, so they need schema ids); an event that can never be published is dead-lettered in
 * its transaction (`rejects`, made only then: its dead-letter series exist only where it is).
 */
export async function openTransitions(
  { config, topology, opts, clock, started }: TransitionWiring,
  inputs: Readonly<{
    db: Db;
    pools: Readonly<Record<string, Db>>;
    tables: SchemaInfo;
    watch: DatabaseWatch;
    holds: FirstPassHolds;
    metrics: Metrics;
    rejects: () => DlqWriter;
  }>,
) {
  const { db, pools, tables, watch, holds, metrics } = inputs;
  const outbox = opts.roles.some((r) => r === 'expirer' || r === 'scanner')
    ? await openOutboxWriter({
        config,
        catalogue: opts.catalogue,
        topology,
        tables,
        db,
        logger: opts.logger,
        rejected: deadLetterRejectedEvents(inputs.rejects(), eventTopics(opts.catalogue, topology), () => clock.now()),
      })
    : undefined;
  if (outbox !== undefined) {
    await started('outbox writer', resource(outbox.stop));
    metrics.trackMissingSchemaIds(outbox.missingSchemaIds);
  }
  const writer = outbox?.writer ?? writesNoEvents;
  const batches = holdUntilChecked(
    holdFirstPass(
      createTransitionBatches(pools, opts.catalogue, { outbox: writer, onEventsWritten: (n) => metrics.eventsWritten.inc(n) }),
      opts.catalogue,
      holds,
      {
        onHeld: (entity, n) => metrics.firstPassHeldEntries.inc({ entity }, n),
        now: () => clock.now(),
      },
    ),
    opts.catalogue,
    watch,
  );
  const reminders = holdUntilChecked(
    createReminderBatches(pools, opts.catalogue, { outbox: writer, observer: reminderObserver(metrics) }),
    opts.catalogue,
    watch,
  );
  return { batches, reminders };
}
