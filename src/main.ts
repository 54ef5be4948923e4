/**
 * Composition root: config → adapters → stages → start. The only place concrete things are
 * wired together. Roles can run alone or several in one process:
 *
 *   repartitioner  CDC topics → bucket topics
 *   expirer        finest ring + due lane → hold → expiry transactions
 *   cascader       coarser rings → hold until `lead` before the bucket → re-route
 *   outbox-keeper  the capture probe and retention of event_outbox (Connect publishes it)
 *   scanner        the compensation scanner: overdue rows the stream missed → the same expiry
 */
import { Partitioners, type Kafka } from 'kafkajs';
import type { Config } from './config';
import { Clock, systemClock } from './core/clock';
import type { EntityCatalogue } from './core/entity-catalogue';
import type { Component } from './runtime/lifecycle';
import { group, resource } from './runtime/group';
import { dlqTopic, Topology } from './core/topology';
import { openDatabases } from './db/databases';
import { createKafka } from './kafka/client';
import { createDlqWriter } from './kafka/dlq-writer';
import { firstPassLimitsFor } from './core/first-pass-guard';
import { DeadLetterCodes, Roles, type DeadLetterStage, type Role } from './roles';
import { createGuardedProducer } from './kafka/guarded-producer';
import type { BreakerState } from './runtime/breaker';
import { checkAnsweringSchemas, schemaNamesOf } from './db/check-entity-schema';
import { DatabaseWatch, type DatabaseState } from './db/database-watch';
import { FirstPassHolds, heldTablesByTransition, type HeldTransition } from './db/first-pass-holds';
import { openTransitions } from './expire/open-transitions';
import { TimebucketError } from './core/errors';
import { assertShardsFit } from './core/router';
import { startOutboxKeeper, type OutboxKeeperContext } from './publish/start-outbox-keeper';
import { derivedSchemasWaitingFor } from './core/event-catalogue';
import { startScanner, type ScannerContext } from './reconcile/start-scanner';
import { startRepartitioner, type RepartitionerContext } from './ingest/start-repartitioner';
import { startExpirer, type ExpirerContext } from './hold/start-expirer';
import { startCascader, type CascaderContext } from './hold/start-cascader';
import type { Logger } from './ops/logger';
import type { HealthCheck } from './ops/http-server';
import { createMetrics, Metrics } from './ops/metrics';
import { startControl } from './control/start-control';
import type { Db } from './db/knex';
import { replicaHeartbeat } from './db/replica-heartbeat';
import { trackReplicaLag } from './ops/metrics-replica';
import type { SwitchSummary } from './control/switch-state';
import type { PacerView } from './core/pacer';
import type { PacingBoard } from './hold/database-pacing';

/** The process's group (runtime/group.ts) as `timebucket run` reads it (cli/run.ts, cli/readiness.ts). */
export type Running = Readonly<{
  /** Resolves once every started consumer has joined its group. */
  ready: () => Promise<void>;
  /** Every consumer alive and making progress; the reasons when not (for /healthz). */
  health: HealthCheck;
  /** Resolves when a part failed for good (a consumer crashed and will not restart). */
  failed: Promise<Error>;
  /** The operator's switches as this process applies them (for /readyz). */
  control: () => SwitchSummary;
  /** Each database: answering, and its tables checked (for /readyz). */
  databases: () => Readonly<Record<string, DatabaseState>>;
  /** The transitions held at a table because their first pass was refused (for /readyz). */
  firstPassHeld: () => HeldTransition[];
  /** The expirer's pacer of each database (for /readyz); empty without the expirer role or with TB_PACING=off. */
  pacing: () => ReadonlyMap<string, PacerView>;
  stop: () => Promise<void>;
}>;

const BREAKER_VALUES: Readonly<Record<BreakerState, number>> = { closed: 0, 'half-open': 1, open: 2 };

/** catalogue: the entities file (ops/load-entities.ts), the tables every role moves. */
export type StartOptions = Readonly<{
  roles: readonly Role[];
  logger: Logger;
  catalogue: EntityCatalogue;
  clock?: Clock;
  instanceId?: string;
  metrics?: Metrics;
}>;

/** Starts a part of the process and names it there (startTimebucket's group). */
type StartPart = <C extends Component>(part: string, component: C) => Promise<C>;

/** What the wiring hands every step after it. */
type Wiring = Readonly<{ config: Config; topology: Topology; opts: StartOptions; clock: Clock; started: StartPart }>;

export async function startTimebucket(config: Config, topology: Topology, opts: StartOptions): Promise<Running> {
  // Each part started as it is built (the next needs what it gives), then the process is their
  // group: stopped in reverse start order, every cleanup even when one fails or hangs, the parts
  // sharing TB_SHUTDOWN_TIMEOUT_MS (one still running when its share is spent is named in the log
  // and left behind, and the next part, at least a second each, is still stopped).
  const parts: Record<string, Component> = {};
  const started: StartPart = async (part, component) => {
    parts[part] = component;
    await component.start();
    return component;
  };
  const timebucket = () => group('timebucket', parts, { stopDeadlineMs: config.shutdownTimeoutMs, logger: opts.logger });
  let wired: Awaited<ReturnType<typeof wire>>;
  try {
    wired = await wire({ config, topology, opts, clock: opts.clock ?? systemClock, started });
    opts.logger.info({ roles: opts.roles, topology: topology.prefix }, 'timebucket running');
  } catch (err) {
    await timebucket().stop();
    throw err;
  }
  const running = timebucket();
  await running.start(); // every part is running: the group watches them
  return {
    ready: () => running.ready(),
    health: () => {
      const problems = running.problems();
      return { ok: problems.length === 0, problems };
    },
    failed: running.failed(),
    control: wired.control,
    databases: () => wired.watch.snapshot(),
    firstPassHeld: () => wired.holds.list(),
    pacing: () => wired.pacingBoard.views?.() ?? new Map(),
    stop: () => running.stop(),
  };
}

/** config → adapters → stages: every part started in turn; what /readyz reads of them. */
async function wire(w: Wiring): Promise<Readonly<{ control: () => SwitchSummary; watch: DatabaseWatch; holds: FirstPassHolds; pacingBoard: PacingBoard }>> {
  const { config, topology, opts, clock } = w;
  const instanceId = opts.instanceId ?? config.instanceId;
  const kafka = createKafka(config.kafka, opts.logger, `-${instanceId}`);
  const { databases, tables, watch, metrics, holds } = await watchDatabases(w);
  const db = databases.main;
  const { producer, dlqFor, onBreakerStateChange } = await openProducer(w, kafka, metrics);
  const { batches, reminders } = await openTransitions(w, { db, pools: databases.pools, tables, watch, holds, metrics, rejects: () => dlqFor('outbox') });
  // Read before any role starts: a restarted process must not fire what the operator paused.
  const control = await w.started('control switches', await startControl({ config, db, catalogue: opts.catalogue, clock, logger: opts.logger, metrics }));
  const heartbeat = opts.roles.includes('expirer') ? await startReplicaHeartbeat(w, databases.pools, metrics, instanceId) : undefined;
  const pacingBoard: PacingBoard = {};
  const ctx: RoleContext = {
    config,
    topology,
    catalogue: opts.catalogue,
    batches,
    reminders,
    kafka,
    producer,
    dlqFor,
    db,
    dbs: databases.pools,
    clock,
    logger: opts.logger,
    instanceId,
    metrics,
    onBreakerStateChange,
    gate: control.gate,
    firstPassHolds: holds,
    pacingBoard,
    ...(heartbeat !== undefined && { replicaLagMs: heartbeat.lagMs }),
  };
  for (const role of Roles) {
    if (!opts.roles.includes(role)) continue;
    await w.started(role, await starters[role](ctx));
  }
  return { control: control.summary, watch, holds, pacingBoard };
}

/**
 * The database pools, the start-up check of the tables, the metrics and the database watch.
 * Before anything starts: a mapping that does not match the tables would fail every batch, and a
 * spread entity needs a shard per database at least. A database other than the main one that
 * does not answer is checked once it does; its batches wait until then. A refused first pass
 * stops no process: that transition is held at that table (db/first-pass-holds.ts).
 */
async function watchDatabases({ config, topology, opts, started }: Wiring) {
  const databases = openDatabases(config, opts.catalogue, opts.logger);
  await started(
    'database pools',
    resource(() => databases.destroy()),
  );
  const schemaNames = schemaNamesOf(config.databases);
  // Guarded: every process that transitions (core/first-pass-guard.ts).
  const firstPass = firstPassLimitsFor(opts.roles, config.firstPass);
  const { schema: tables, unchecked, errors, held } = await checkAnsweringSchemas(databases.pools, opts.catalogue, schemaNames, firstPass);
  assertShardsFit(opts.catalogue, topology);
  const metrics = opts.metrics ?? createMetrics({ entities: opts.catalogue.entities.map((e) => e.name), transitions: opts.catalogue.transitions });
  const holds = new FirstPassHolds((all) => {
    for (const h of heldTablesByTransition(opts.catalogue, all)) metrics.firstPassHeld.set({ entity: h.entity, transition: h.transition }, h.tables);
  });
  holds.add(held);
  if (held.length > 0) opts.logger.error({ held: held.map((h) => h.problem) }, 'first pass refused: those transitions are held, everything else runs');
  if (unchecked.length > 0) {
    opts.logger.warn(
      { databases: unchecked, errors },
      'databases that do not answer: the others are served; their tables are checked, and their batches run, once they answer',
    );
    const needed = derivedSchemasWaitingFor(opts.catalogue, tables);
    // Without the columns their event schemas derive from, no event of theirs can be encoded.
    if (needed.length > 0)
      throw new TimebucketError(
        'DATABASE_UNCHECKED',
        `the event schemas of ${needed.join(', ')} derive from tables on databases that do not answer (${unchecked.join(', ')})`,
        { retriable: true },
      );
  }
  const watch = new DatabaseWatch({
    pools: databases.pools,
    catalogue: opts.catalogue,
    schemaNames,
    schema: tables,
    unchecked,
    startErrors: errors,
    intervalMs: config.dbPingIntervalMs,
    firstPass,
    holds,
    logger: opts.logger.child({ component: 'database-watch' }),
    onState: (database, state) => metrics.databaseUp.set({ database }, state.answering && state.checked ? 1 : 0),
  });
  await started('database watch', watch.loop);
  return { databases, tables, watch, metrics, holds };
}

/** The guarded producer, connected, its breaker's gauge, and the DLQ writer of each stage over it. */
async function openProducer({ topology, opts, started }: Wiring, kafka: Kafka, metrics: Metrics) {
  const onBreakerStateChange = (name: string, state: BreakerState) => metrics.breakerState.set({ breaker: name }, BREAKER_VALUES[state]);
  // Bucket records carry explicit partitions; keyed records (the DLQ's) use the Java-compatible hash.
  onBreakerStateChange('producer', 'closed');
  const producer = createGuardedProducer(
    () => kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner }),
    {
      breaker: 'producer',
      logger: opts.logger.child({ component: 'producer', breaker: 'producer' }),
      onBreakerStateChange,
      onReplaced: () => metrics.producerReplacements.inc(),
    },
  );
  // Disconnected even when the connect fails (started() names it first).
  await started(
    'producer',
    resource(
      () => producer.disconnect(),
      () => producer.connect(),
    ),
  );
  const dlqFor = (stage: DeadLetterStage) => {
    // At 0 from the start, so the DLQ alert and panel have series before the first dead letter.
    const codes = DeadLetterCodes[stage] ?? [];
    for (const code of codes) metrics.deadLetters.inc({ stage, code }, 0);
    return createDlqWriter({
      producer,
      topic: dlqTopic(topology),
      partitions: topology.dlq.partitions,
      otherCode: codes[0] ?? 'BUCKET_INVALID',
      logger: opts.logger.child({ role: stage }),
      onDeadLetter: (_source, code) => metrics.deadLetters.inc({ stage, code }),
    });
  };
  return { producer, dlqFor, onBreakerStateChange };
}

/**
 * The expirer's heartbeat on each database with a replica configured (TB_DB_REPLICA_*), and the
 * replicas' lag it measures (db/replica-heartbeat.ts, timebucket_replica_lag_seconds).
 */
async function startReplicaHeartbeat({ config, opts, clock, started }: Wiring, pools: Readonly<Record<string, Db>>, metrics: Metrics, writer: string) {
  const replicas = config.replicas.byDatabase;
  if (Object.keys(replicas).length === 0) return undefined;
  const { heartbeatIntervalMs: intervalMs } = config.replicas;
  const heartbeat = await started('replica heartbeat', replicaHeartbeat({ primaries: pools, replicas, writer, intervalMs, clock, logger: opts.logger }));
  trackReplicaLag(metrics.registry, heartbeat.lags);
  return heartbeat;
}

/**
 * What the process hands its roles: one object holding what any of them reads. Each role's
 * starter, in its stage's folder, declares the part it reads (its context type) and returns its
 * group, started (runtime/group.ts).
 */
type RoleContext = RepartitionerContext & ExpirerContext & CascaderContext & OutboxKeeperContext & ScannerContext;

const starters: Readonly<Record<Role, (ctx: RoleContext) => Promise<Component>>> = {
  repartitioner: startRepartitioner,
  expirer: startExpirer,
  cascader: startCascader,
  'outbox-keeper': startOutboxKeeper,
  scanner: startScanner,
};
