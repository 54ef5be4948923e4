/**
 * Composition root: config → adapters → stages → start. The only place concrete things are
 * wired together. Roles can run alone or several in one process:
 *
 *   repartitioner  CDC topics → bucket topics
 *   expirer        finest ring + due lane → hold → expiry transactions
 *   cascader       coarser rings → hold until `lead` before the bucket → re-route
 *   relay          outbox → event topics (Avro, registry)
 *   scanner        the compensation scanner: overdue rows the stream missed → the same expiry
 */
import { Backoffs } from './core/retry-policy';
import { Kafka, Partitioners } from 'kafkajs';
import type { Config } from './config';
import { Clock, systemClock } from './core/clock';
import type { EntityCatalogue } from './core/entity-catalogue';
import { cdcTopics } from './ingest/cdc-topics';
import { dlqTopic, dueTopic, ringTopics, Topology } from './core/topology';
import { heldRecordReader } from './core/held-record';
import type { Db } from './db/knex';
import { openDatabases } from './db/databases';
import { createKafka } from './kafka/client';
import { createDlqWriter } from './kafka/dlq-writer';
import { pinGroup, startPositions } from './kafka/pin-group-start';
import { DeadLetterCodes, groupIdOf, Roles, tiersReadBy, type Role } from './roles';
import { Repartitioner } from './ingest/repartitioner';
import { HoldConsumer } from './hold/hold-consumer';
import type { ConsumerHealth } from './kafka/consumer-watch';
import { createGuardedProducer, GuardedProducer } from './kafka/guarded-producer';
import { BreakerState, createBreaker } from './ops/breaker';
import { parkToDlq } from './hold/park-to-dlq';
import type { ScheduledEntry } from './core/expiry-plan';
import { ExpirerSink } from './hold/expirer-sink';
import { CascaderSink } from './hold/cascader-sink';
import { createTransitionBatches, TransitionBatches } from './expire/transition-batch';
import { createReminderBatches, isReminderBatch, reminderObserver, type ReminderBatches } from './expire/reminder-batch';
import type { Location, Transition } from './core/entity-catalogue';
import type { SchemaInfo } from './core/column-info';
import { checkEntitySchema, schemaNamesOf } from './db/check-entity-schema';
import { assertShardsFit } from './core/router';
import { startRelay } from './publish/start-relay';
import { openOutboxWriter } from './publish/open-outbox-writer';
import { startScanner } from './reconcile/start-scanner';
import type { Logger } from './ops/logger';
import { createMetrics, Metrics } from './ops/metrics';
import { readOutboxBacklogs } from './publish/sql/outbox-backlog';
import { observeExpiryBatch } from './hold/observe-expiry-batch';
import { startControl } from './ops/control-start';
import type { TransitionGate } from './ops/control-gate';
import type { SwitchSummary } from './ops/control-switch-state';



export type Running = Readonly<{
  /** Resolves once every started consumer has joined its group. */
  ready: () => Promise<void>;
  /** Every consumer alive and making progress; the reasons when not (for /healthz). */
  health: () => Health;
  /** Resolves when a part failed for good (a consumer crashed and will not restart). */
  failed: Promise<Error>;
  /** The operator's switches as this process applies them (for /readyz). */
  control: () => SwitchSummary;
  stop: () => Promise<void>;
}>;

export type Health = Readonly<{ ok: boolean; problems: readonly string[] }>;

const BREAKER_VALUES: Readonly<Record<BreakerState, number>> = { closed: 0, 'half-open': 1, open: 2 };
/** Expiry retries: jittered, up to 5 s apart; a deterministic failure parks after 3 tries alone. */
const PARK_AFTER_ATTEMPTS = 3;

type Started = Readonly<{
  stop: () => Promise<void>;
  joined?: () => Promise<void>;
  health?: () => ConsumerHealth;
  failed?: () => Promise<Error>;
}>;

/** catalogue: the entities file (ops/load-entities.ts), the tables every role moves. */
export type StartOptions = Readonly<{ roles: readonly Role[]; logger: Logger; catalogue: EntityCatalogue; clock?: Clock; instanceId?: string; metrics?: Metrics }>;

export async function startTimebucket(config: Config, topology: Topology, opts: StartOptions): Promise<Running> {
  const clock = opts.clock ?? systemClock;
  const instanceId = opts.instanceId ?? config.instanceId;
  const kafka = createKafka(config.kafka, opts.logger, `-${instanceId}`);
  const stops: Array<() => Promise<void>> = [];
  const joins: Array<Promise<void>> = [];
  const healths: Array<() => ConsumerHealth> = [];
  const failures: Array<Promise<Error>> = [];
  let controlSummary!: () => SwitchSummary;
  const stopAll = async () => {
    // Reverse start order; every cleanup runs even when one fails.
    for (const stop of stops.reverse()) {
      await stop().catch((err: unknown) => opts.logger.error({ err }, 'stop failed'));
    }
  };
  try {
    const databases = openDatabases(config, opts.catalogue, opts.logger);
    stops.push(() => databases.destroy());
    const db = databases.main;
    // Before anything starts: a mapping that does not match the tables would fail every batch,
    // and a spread entity needs a shard per database at least.
    const tables = await checkEntitySchema(databases.pools, opts.catalogue, schemaNamesOf(config.databases));
    assertShardsFit(opts.catalogue, topology);
    const metrics = opts.metrics ?? createMetrics({ entities: opts.catalogue.entities.map((e) => e.name), transitions: opts.catalogue.transitions });
    // Only the roles that run transitions write events (router mode: encoded, so they need schema ids).
    const outbox = opts.roles.some((r) => r === 'expirer' || r === 'scanner')
      ? await openOutboxWriter({
          config,
          catalogue: opts.catalogue,
          topology,
          tables,
          db,
          logger: opts.logger,
          observer: { deferred: (n) => metrics.outboxDeferred.inc(n), registrationFailed: () => metrics.schemaRegistrationFailures.inc() },
        })
      : undefined;
    if (outbox !== undefined) {
      stops.push(outbox.stop);
      metrics.trackMissingSchemaIds(outbox.missingSchemaIds);
    }
    const batches = createTransitionBatches(databases.pools, opts.catalogue, { outbox: outbox?.writer, onEventsWritten: (n) => metrics.eventsWritten.inc(n) });
    const reminders = createReminderBatches(databases.pools, opts.catalogue, { outbox: outbox?.writer, observer: reminderObserver(metrics) });
    const onBreakerStateChange = (name: string, state: BreakerState) => metrics.breakerState.set({ breaker: name }, BREAKER_VALUES[state]);
    // Bucket records carry explicit partitions; the relay's keys use the Java-compatible hash.
    const newProducer = () =>
      createGuardedProducer(
        () => kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner }),
        { logger: opts.logger.child({ component: 'producer' }), onBreakerStateChange, onReplaced: () => metrics.producerReplacements.inc() },
      );
    const producer = newProducer();
    onBreakerStateChange('producer', 'closed');
    stops.push(() => producer.disconnect());
    await producer.connect();
    metrics.trackOutbox(() => readOutboxBacklogs(databases.pools));
    // Read before any role starts: a restarted process must not fire what the operator paused.
    const control = await startControl({ config, db, catalogue: opts.catalogue, clock, logger: opts.logger, metrics });
    stops.push(async () => control.stop());
    controlSummary = control.summary;
    const dlqFor = (stage: Role) => {
      // At 0 from the start, so the DLQ alert and panel have series before the first dead letter.
      const codes = DeadLetterCodes[stage] ?? [];
      for (const code of codes) metrics.deadLetters.inc({ stage, code }, 0);
      return createDlqWriter({
        producer,
        topic: dlqTopic(topology),
        otherCode: codes[0] ?? 'BUCKET_INVALID',
        logger: opts.logger.child({ role: stage }),
        onDeadLetter: (_source, code) => metrics.deadLetters.inc({ stage, code }),
      });
    };
    const ctx = { config, topology, catalogue: opts.catalogue, tables, batches, reminders, kafka, producer, newProducer, dlqFor, db, dbs: databases.pools, clock, logger: opts.logger, instanceId, metrics, onBreakerStateChange, gate: control.gate };
    for (const role of Roles) {
      if (!opts.roles.includes(role)) continue;
      const started = await starters[role](ctx);
      stops.push(started.stop);
      if (started.joined) joins.push(started.joined());
      if (started.health) healths.push(started.health);
      if (started.failed) failures.push(started.failed());
    }
    opts.logger.info({ roles: opts.roles, topology: topology.prefix }, 'timebucket running');
  } catch (err) {
    await stopAll();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  const health = (): Health => {
    const problems = healths.map((h) => h()).flatMap((h) => (h.ok ? [] : [h.reason]));
    return { ok: problems.length === 0, problems };
  };
  return {
    ready: () => Promise.all(joins).then(() => undefined),
    health,
    failed: Promise.race(failures.length > 0 ? failures : [new Promise<Error>(() => undefined)]),
    control: () => controlSummary(),
    stop: () => (stopped ??= stopAll()),
  };
}

type Ctx = Readonly<{
  config: Config;
  topology: Topology;
  catalogue: EntityCatalogue;
  /** The mapped tables as information_schema describes them (checked at start). */
  tables: SchemaInfo;
  /** The expiry transaction of every transition, its SQL built once. */
  batches: TransitionBatches;
  /** The reminder transaction of every transition with reminders (docs/reminders.md). */
  reminders: ReminderBatches;
  kafka: Kafka;
  producer: GuardedProducer;
  /** Another producer like `producer`, for a sender that must not share one (each relay loop). */
  newProducer: () => GuardedProducer;
  onBreakerStateChange: (name: string, state: BreakerState) => void;
  dlqFor: (stage: Role) => ReturnType<typeof createDlqWriter>;
  /** The main database: timebucket's own tables. */
  db: Db;
  /** A pool per database (config.databases), main among them. */
  dbs: Readonly<Record<string, Db>>;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  /** The operator's pause and throttle switches (ops/control-gate.ts). */
  gate: TransitionGate;
}>;

function groupOf(ctx: Ctx, role: Role): string {
  return groupIdOf(ctx.config.groupPrefix, role);
}

function consumerFor(ctx: Ctx, role: Role) {
  return ctx.kafka.consumer({
    groupId: groupOf(ctx, role),
    sessionTimeout: ctx.config.consumer.sessionTimeoutMs,
    heartbeatInterval: ctx.config.consumer.heartbeatIntervalMs,
    maxWaitTimeInMs: 250,
  });
}

const starters: Record<Role, (ctx: Ctx) => Promise<Started>> = {
  async repartitioner(ctx) {
    const byTopic = cdcTopics(ctx.config, ctx.catalogue);
    const admin = ctx.kafka.admin();
    await admin.connect();
    const group = groupOf(ctx, 'repartitioner');
    // Taken before start-up returns: a row written after that is never skipped (pin-group-start.ts).
    const positions = ctx.config.cdc.startFrom === 'latest' ? await startPositions(admin, group, Object.keys(byTopic)) : undefined;
    const stage = new Repartitioner({
      listTopics: () => admin.listTopics(),
      consumer: consumerFor(ctx, 'repartitioner'),
      group,
      stallMs: ctx.config.consumer.stallMs,
      startFrom: ctx.config.cdc.startFrom,
      ...(positions && { pinNewGroup: () => pinGroup(admin, group, positions) }),
      producer: ctx.producer,
      cdcTopics: byTopic,
      catalogue: ctx.catalogue,
      topology: ctx.topology,
      dlq: ctx.dlqFor('repartitioner'),
      clock: ctx.clock,
      logger: ctx.logger.child({ role: 'repartitioner' }),
      onRouted: (lane, count) => ctx.metrics.routed.inc({ lane }, count),
      onReminderSkipped: (reason, t) => ctx.metrics.remindersSkipped.inc({ entity: t.entity, transition: t.name, reason }),
    });
    ctx.metrics.trackCdcLag(() => stage.cdcLag());
    await stage.start();
    const stop = async () => {
      await stage.stop();
      await admin.disconnect();
    };
    return { stop, joined: () => stage.joined(), health: () => stage.health(), failed: () => stage.failed() };
  },

  async expirer(ctx) {
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
    const sink = new ExpirerSink({
      catalogue: ctx.catalogue,
      expireBatch: (transition, entries, location) => breakers.get(location.database)!.fire(transition, entries, location),
      clock: ctx.clock,
      maxBatchSize: ctx.config.expirer.batchSize,
      maxConcurrentBatches: ctx.config.expirer.concurrency,
      backoff: Backoffs.expiry,
      maxAttempts: PARK_AFTER_ATTEMPTS,
      park: parkToDlq(ctx.dlqFor(role), PARK_AFTER_ATTEMPTS, ctx.catalogue),
      logger,
      gate: ctx.gate,
      observer: {
        batch: (entity, outcome) => {
          // A reminder batch transitions nothing; reminderObserver counts what it sent.
          if (outcome.reminders !== true) observeExpiryBatch(ctx.metrics, entity, outcome);
        },
        failed: (entity) => ctx.metrics.batchFailures.inc({ entity }),
        parked: (entity) => ctx.metrics.parked.inc({ entity }),
      },
    });
    const started = await startHoldStage(ctx, role, [...ringTopics(ctx.topology, tiersReadBy(role, ctx.topology)), dueTopic(ctx.topology)], sink, logger);
    return {
      ...started,
      stop: async () => {
        await started.stop();
        for (const b of breakers.values()) b.shutdown();
      },
    };
  },

  async cascader(ctx) {
    const role = 'cascader';
    const coarser = tiersReadBy(role, ctx.topology);
    if (coarser.length === 0) return { stop: async () => undefined };
    const logger = ctx.logger.child({ role });
    const sink = new CascaderSink({
      producer: ctx.producer,
      topology: ctx.topology,
      catalogue: ctx.catalogue,
      clock: ctx.clock,
      flushIntervalMs: 50,
      maxBatchSize: 1_000,
      logger,
      onCascaded: (count) => ctx.metrics.cascaded.inc(count),
    });
    return startHoldStage(ctx, role, ringTopics(ctx.topology, coarser), sink, logger);
  },

  async relay(ctx) {
    return startRelay(ctx);
  },

  async scanner(ctx) {
    return startScanner(ctx);
  },
};

/** A hold consumer over `topics` feeding `sink`: the shared shape of the expirer and the cascader. */
async function startHoldStage(ctx: Ctx, role: Role, topics: string[], sink: ExpirerSink | CascaderSink, logger: Logger): Promise<Started> {
  // Only for the due-lag metric of partitions paused at the memory cap (HoldConsumer.fetchEnds).
  const admin = ctx.kafka.admin();
  await admin.connect();
  // Entries this topology would not have put where they are (a topology change, a writer clock
  // far ahead) are routed again, as the cascader routes released ones (core/held-record.ts).
  const reroute = new CascaderSink({
    producer: ctx.producer,
    topology: ctx.topology,
    catalogue: ctx.catalogue,
    clock: ctx.clock,
    flushIntervalMs: 50,
    maxBatchSize: 1_000,
    logger: logger.child({ component: 'reroute' }),
    onCascaded: (count) => ctx.metrics.rerouted.inc({ stage: role }, count),
  });
  ctx.metrics.rerouted.inc({ stage: role }, 0);
  const stage = new HoldConsumer({
    fetchEnds: (topic) => admin.fetchTopicOffsets(topic),
    consumer: consumerFor(ctx, role),
    topics,
    group: groupOf(ctx, role),
    read: heldRecordReader(ctx.topology, ctx.catalogue),
    sink,
    reroute,
    // The expirer's finest tier is released early; its entries are due from their bucket on.
    dueFrom: role === 'expirer' ? 'bucket' : 'release',
    dlq: ctx.dlqFor(role),
    clock: ctx.clock,
    maxInMemoryPerPartition: ctx.config.expirer.maxInMemoryPerPartition,
    commitIntervalMs: ctx.config.expirer.commitIntervalMs,
    stallMs: ctx.config.consumer.stallMs,
    logger,
  });
  try {
    await stage.start();
  } catch (err) {
    await admin.disconnect().catch(() => undefined);
    throw err;
  }
  ctx.metrics.trackHold(role, () => stage.stats());
  const stop = async () => {
    await stage.stop();
    sink.close();
    reroute.close();
    await admin.disconnect();
  };
  return { stop, joined: () => stage.joined(), health: () => stage.health(), failed: () => stage.failed() };
}
