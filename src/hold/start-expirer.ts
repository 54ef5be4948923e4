/**
 * Wires the expirer role: a circuit breaker per database around the expiry and reminder
 * transactions, each database's pacer (hold/database-pacing.ts, TB_PACING), the expirer sink
 * (fire each entry at its own time, in batches, parked after failing alone) and a hold consumer
 * over the finest ring and the due lane.
 */
import type { ScheduledEntry } from '../core/expiry-plan';
import type { Location, Transition } from '../core/entity-catalogue';
import { dueTopic, ringTopics, waitingTopic } from '../core/topology';
import { databasesOf, MAIN_DATABASE } from '../core/entity-catalogue';
import { Backoffs } from '../runtime/retry-policy';
import { isReminderBatch } from '../expire/reminder-batch';
import { createBreaker } from '../runtime/breaker';
import { tiersReadBy } from '../roles';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { TransitionGate } from '../control/gate';
import type { ReminderBatches } from '../expire/reminder-batch';
import type { TransitionBatches } from '../expire/transition-batch';
import type { BreakerState } from '../runtime/breaker';
import { group, resource, type Group } from '../runtime/group';
import { ExpirerSink } from './expirer-sink';
import { waitingLanes } from './waiting-lanes';
import { pacerStatePublisher } from '../control/pacer-state-publisher';
import { observeExpiryBatch } from './observe-expiry-batch';
import { parkToDlq } from './park-to-dlq';
import { startHoldStage, type HoldStageContext } from './start-hold-stage';
import { createDatabasePacing, type DatabasePacing, type PacingBoard } from './database-pacing';
import { pacerSignalReader } from '../db/pacer-signals';
import { recordPacing } from '../ops/metrics-pacing';
import { latencyProbe } from '../db/latency-probe';
import type { Component } from '../runtime/lifecycle';

/** Expiry retries: jittered, up to 5 s apart; a deterministic failure parks after 3 tries alone. */
const PARK_AFTER_ATTEMPTS = 3;
/**
 * A missing table or column is waited out this long before entries are tried alone and parked:
 * gh-ost's cut-over holds its lock for at most 3 s by default (--cut-over-lock-timeout-seconds)
 * and retries it; pt-online-schema-change's swap is one RENAME. Ten times that, and still far
 * inside any lateness budget.
 */
const CUT_OVER_GRACE_MS = 30_000;

export type ExpirerContext = HoldStageContext &
  Readonly<{
    config: Pick<Config, 'expirer' | 'pacing' | 'groupPrefix' | 'instanceId' | 'databases'>;
    /** A pool per database (config.databases): a breaker for each. */
    dbs: Readonly<Record<string, Knex>>;
    /** The expiry transaction of every transition, its SQL built once (main.ts shares it with the scanner). */
    batches: TransitionBatches;
    /** The reminder transaction of every transition with reminders (docs/reminders.md). */
    reminders: ReminderBatches;
    /** The operator's pause and throttle switches (control/gate.ts). */
    gate: TransitionGate;
    onBreakerStateChange: (name: string, state: BreakerState) => void;
    /** Each database's replica lag by the heartbeat (db/replica-heartbeat.ts), a pacing signal; absent: no replica configured. */
    replicaLagMs?: (database: string) => number | undefined;
    /** Where /readyz reads the pacers (main.ts). */
    pacingBoard?: PacingBoard;
  }>;

export async function startExpirer(ctx: ExpirerContext): Promise<Group> {
  const role = 'expirer';
  const logger = ctx.logger.child({ role });
  // A breaker per database: one that is down opens its own breaker, and only the batches of its
  // tables (so its shards' partitions) wait; the other databases' go on.
  const breakers = new Map(
    Object.keys(ctx.dbs).map((name) => {
      const breakerName = name === 'main' ? 'expiry' : `expiry-${name}`;
      ctx.onBreakerStateChange(breakerName, 'closed');
      const breaker = createBreaker(
        // A batch is all reminders or none (the sink groups them apart).
        (transition: Transition, entries: readonly ScheduledEntry[], location: Location) =>
          isReminderBatch(entries) ? ctx.reminders.run(transition, entries, 'stream', location) : ctx.batches.run(transition, entries, 'stream', location),
        { name: breakerName, logger, onStateChange: ctx.onBreakerStateChange },
      );
      return [name, breaker] as const;
    }),
  );
  // Due entries the consumer has not read yet (past the memory cap) count in the budget's backlog.
  const consumer: { unreadDue: () => number } = { unreadDue: () => 0 };
  const pacing = ctx.config.pacing.enabled ? startPacing(ctx, logger, () => consumer.unreadDue()) : undefined;
  const sink = new ExpirerSink({
    catalogue: ctx.catalogue,
    expireBatch: (transition, entries, location) => breakers.get(location.database)!.fire(transition, entries, location),
    clock: ctx.clock,
    maxBatchSize: ctx.config.expirer.batchSize,
    maxConcurrentBatches: ctx.config.expirer.concurrency,
    backoff: Backoffs.expiry,
    maxAttempts: PARK_AFTER_ATTEMPTS,
    cutOverGraceMs: CUT_OVER_GRACE_MS,
    park: parkToDlq(ctx.dlqFor(role), PARK_AFTER_ATTEMPTS, ctx.catalogue),
    logger,
    gate: ctx.gate,
    waiting: waitingLanes(ctx),
    ...(pacing !== undefined && { pacing }),
    observer: {
      batch: (entity, outcome) => {
        // A reminder batch transitions nothing; reminderObserver counts what it sent.
        if (outcome.reminders !== true) observeExpiryBatch(ctx.metrics, entity, outcome);
      },
      failed: (entity) => ctx.metrics.batchFailures.inc({ entity }),
      parked: (entity) => ctx.metrics.parked.inc({ entity }),
      movedToWaiting: (entity, count) => ctx.metrics.movedToWaiting.inc({ entity }, count),
    },
  });
  const waitingLaneTopics = databasesOf(ctx.catalogue).map((database) => waitingTopic(ctx.topology, database));
  const topics = [...ringTopics(ctx.topology, tiersReadBy(role, ctx.topology)), dueTopic(ctx.topology), ...waitingLaneTopics];
  const started = await startHoldStage(ctx, role, topics, sink, logger, (stage) => (consumer.unreadDue = () => stage.unreadDue()));
  // The breakers are shut down after the consumer stopped (reverse order); the pacers' rows for
  // `ctl status` are deleted first.
  const expirer = group(role, {
    breakers: resource(async () => breakers.forEach((b) => b.shutdown())),
    [role]: started,
    ...(pacing !== undefined && { 'pacer state': pacerStateOf(ctx, pacing, logger), 'latency probe': latencyProbeOf(ctx, pacing, logger) }),
  });
  await expirer.start();
  return expirer;
}

/** The pacers as `timebucket ctl status` shows them: published to the main database every 5 s (control/pacer-state-publisher.ts). */
function pacerStateOf(ctx: ExpirerContext, pacing: DatabasePacing, logger: ExpirerContext['logger']): Group {
  return pacerStatePublisher({
    db: ctx.dbs[MAIN_DATABASE]!,
    scope: ctx.config.groupPrefix,
    instance: ctx.config.instanceId,
    views: () => pacing.views(),
    intervalMs: PACER_STATE_INTERVAL_MS,
    logger,
  });
}

/** Each paced database's probe (db/latency-probe.ts), its answers into its pacer. */
function latencyProbeOf(ctx: ExpirerContext, pacing: DatabasePacing, logger: ExpirerContext['logger']): Component {
  const databases = Object.fromEntries(Object.keys(ctx.dbs).flatMap((d) => (ctx.config.databases[d] === undefined ? [] : [[d, ctx.config.databases[d]]])));
  return latencyProbe({
    databases,
    intervalMs: ctx.config.pacing.probeIntervalMs,
    // A probe slower than a few adjustments is a database away, not a slow one.
    timeoutMs: Math.max(5_000, 5 * ctx.config.pacing.intervalMs),
    onSample: (database, latencyMs) => pacing.observeProbe(database, latencyMs),
    logger,
  });
}

/** How often an expirer refreshes its pacers' rows: well inside `ctl status`'s 30 s freshness. */
const PACER_STATE_INTERVAL_MS = 5_000;

/** Each database's pacer (TB_PACING=on): fed by its server's signals, seen in the metrics. */
function startPacing(ctx: ExpirerContext, logger: ExpirerContext['logger'], unreadDue: () => number): DatabasePacing {
  const databases = Object.keys(ctx.dbs);
  const pacing = createDatabasePacing({
    databases,
    settings: ctx.config.pacing.settings,
    clock: ctx.clock,
    intervalMs: ctx.config.pacing.intervalMs,
    unreadDue,
    readSignals: pacerSignalReader(ctx.dbs, logger),
    ...(ctx.replicaLagMs !== undefined && { replicaLagMs: ctx.replicaLagMs }),
    onView: (database, view) => recordPacing(ctx.metrics, database, view),
    logger,
  });
  for (const [database, view] of pacing.views()) recordPacing(ctx.metrics, database, view);
  if (ctx.pacingBoard !== undefined) ctx.pacingBoard.views = pacing.views;
  return pacing;
}
