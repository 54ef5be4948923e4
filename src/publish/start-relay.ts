/**
 * Wires the relay role: the catalogue's event topics from the topology, their schemas
 * registered (schema files, or derived from `tables`), TB_RELAY_CONCURRENCY relay loops started
 * (each with its own id, `relay-<instance>/<n>`), and the outbox retention when
 * TB_OUTBOX_RETENTION_MS > 0. Per database: every database an entity lives on has its own outbox
 * (written in the expiry transaction), so each gets its loops and its retention.
 *
 * The registry is not a start-up dependency of the process: when it cannot be reached, the
 * relay registers in the background (retried with backoff) and starts its loops once that
 * succeeds; every other role starts meanwhile, and the events wait in the outbox.
 *
 * Each loop sends through an idempotent producer of its own. Loops sharing one would interleave
 * their requests to the same partitions: when the first is retried (a leader moved, a new
 * topic's leader not yet elected), the second, numbered after it, reaches the broker first and
 * is refused as OUT_OF_ORDER_SEQUENCE_NUMBER; both cycles fail, and what the first had appended
 * is sent again (seen in CI as duplicate events). One loop awaits each send, so its own
 * sequences stay in order.
 */
import type { Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import type { GuardedProducer } from '../kafka/guarded-producer';
import type { Config } from '../config';
import type { Clock } from '../core/clock';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { eventTopics } from '../core/event-catalogue';
import type { Topology } from '../core/topology';
import type { Logger } from '../ops/logger';
import { EventTables, registerEventSchemas, type SchemaIds } from './schemas';
import { Backoffs, classifyFailure } from '../core/retry-policy';
import { retryInBackground } from '../ops/retry-in-background';
import { createSchemaRegistry } from './schema-registry';
import { OutboxRelay } from './outbox-relay';
import { idleHoldVariableOf } from './sql/lock-outbox-batch';
import { serverFlavour } from '../db/server-flavour';
import { OutboxRetention, type PurgePageFn } from './outbox-retention';
import { purgeEventOutboxPage } from './sql/purge-event-outbox';
import { CaptureProbe } from './capture-probe';
import { probeTopic } from '../core/topology';
import type { Metrics } from '../ops/metrics';
import { FailureWatch, type WatchedRole } from '../ops/failure-watch';

// Retention pages: 1000 rows are one short DELETE; the pause keeps a day's worth of a hot minute
// (a million rows) from crowding the database, at several thousand rows a second. A pass that
// found nothing more to delete waits a minute: retention is measured in hours.
const RETENTION_BATCH_SIZE = 1_000;
const RETENTION_PAUSE_MS = 100;
const RETENTION_INTERVAL_MS = 60_000;
// A transition's transaction writes its event_outbox row before it commits: one that began
// before a probe and committed after it is behind that probe in the binlog. Retention keeps
// rows this much younger than the watermark as well, far longer than any expiry transaction.
const CAPTURE_MARGIN_MS = 60_000;
/** While the registry cannot be reached at start: retried up to every 10 s. */

export async function startRelay(ctx: {
  config: Config;
  topology: Topology;
  catalogue: EntityCatalogue;
  /** The mapped tables' columns (information_schema): needed for events without a schema file. */
  tables?: EventTables;
  /** A pool per database (config.databases): each one's outbox is relayed. */
  dbs: Readonly<Record<string, Knex>>;
  /** For the capture probe's consumer (router mode). */
  kafka: Pick<Kafka, 'consumer'>;
  /** A new producer (idempotent, guarded) for each relay loop; the relay connects and closes it. */
  newProducer: (breaker: string) => GuardedProducer;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  metrics: Metrics;
}): Promise<WatchedRole> {
  const watch = new FailureWatch();
  const topicsByEventType = eventTopics(ctx.catalogue, ctx.topology);
  const registry = createSchemaRegistry(ctx.config.registry);
  const logger = ctx.logger.child({ role: 'relay' });
  const register = () => registerEventSchemas(registry, ctx.catalogue, topicsByEventType, { registry: ctx.config.registry, tables: ctx.tables });
  const startAll = async (schemaIds: SchemaIds): Promise<() => Promise<void>> => {
    const stops: Array<() => Promise<void>> = [];
    try {
      for (const [index, [name, db]] of Object.entries(ctx.dbs).entries()) {
        stops.push(await startOutbox(ctx, { name, index, db, schemaIds, registry, topicsByEventType, watch, logger: name === 'main' ? logger : logger.child({ database: name }) }));
      }
    } catch (err) {
      await Promise.all(stops.map((stop) => stop()));
      throw err;
    }
    return async () => {
      await Promise.all(stops.map((stop) => stop()));
    };
  };
  // A schema that does not fit, or a registry that refuses us (401), stops start-up here, named,
  // as a misconfiguration should. A registry that cannot be reached only holds publishing: the
  // other roles of the process (expiries, the cascader, the scanner) start and run without it.
  // Router mode: event_outbox's retention, held by the capture probe's watermark, and the probe need no registry.
  const probe = startCaptureProbe(ctx, logger);
  const eventRetentions = startEventOutboxRetention(ctx, watch, logger, probe);
  const withRetentions = (stop: () => Promise<void>): WatchedRole => ({
    stop: async () => {
      await Promise.all([stop(), ...eventRetentions.map((r) => r.stop()), probe?.stop()]);
    },
    health: () => watch.health(),
    failed: () => watch.failed(),
  });
  // Router mode: Connect publishes; the role probes and purges, and never calls the registry.
  if (ctx.config.publish.mode === 'router') return withRetentions(async () => undefined);
  let schemaIds: SchemaIds;
  try {
    schemaIds = await register();
  } catch (err) {
    if (classifyFailure(err) !== 'retriable') {
      await Promise.all([...eventRetentions.map((r) => r.stop()), probe?.stop()]);
      throw err;
    }
    logger.warn({ err }, 'the schema registry cannot be reached: publishing waits for it (transitions go on; their events wait in the outbox)');
    ctx.metrics.relayFailures.inc();
    return withRetentions(startLater(ctx, logger, register, startAll));
  }
  return withRetentions(await startAll(schemaIds));
}

/** One table's retention, paced as every other (the relay outbox's by default), watched by the role: a retention FAILED fails it (/healthz, exit 1). */
function retentionOf<C>(
  ctx: Parameters<typeof startRelay>[0],
  watch: FailureWatch,
  db: Knex,
  logger: Logger,
  purgePage?: PurgePageFn<C>,
  capturedAgeMs?: () => number | undefined,
): OutboxRetention<C> {
  return watch.add(new OutboxRetention<C>({
    db,
    purgePage,
    capturedAgeMs,
    retentionMs: ctx.config.relay.retentionMs,
    batchSize: RETENTION_BATCH_SIZE,
    pauseMs: RETENTION_PAUSE_MS,
    intervalMs: RETENTION_INTERVAL_MS,
    logger,
    observer: { purged: (rows) => ctx.metrics.outboxPurged.inc(rows), failed: (_err, kind) => ctx.metrics.retentionFailures.inc({ kind }) },
  }));
}

/** In router mode, the capture probe over every database's event_outbox, its lag a gauge. */
function startCaptureProbe(ctx: Parameters<typeof startRelay>[0], logger: Logger): CaptureProbe | undefined {
  if (ctx.config.publish.mode !== 'router') return undefined;
  const group = `${ctx.config.groupPrefix}.probe-${ctx.instanceId}`;
  const probe = new CaptureProbe({
    dbs: ctx.dbs,
    topic: probeTopic(ctx.topology),
    // A group per process: each process sees every probe and tracks its own.
    group,
    newConsumer: () => ctx.kafka.consumer({ groupId: group, maxWaitTimeInMs: 250 }),
    intervalMs: ctx.config.publish.probeIntervalMs,
    stallMs: ctx.config.consumer.stallMs,
    clock: ctx.clock,
    logger,
    onWriteFailed: () => ctx.metrics.captureProbeFailures.inc(),
  });
  void probe.start();
  ctx.metrics.trackCaptureLag(() => probe.lagSeconds());
  return probe;
}

/**
 * In router mode, each database's event_outbox loses its rows older than TB_OUTBOX_RETENTION_MS
 * and than its capture watermark: rows written before the newest probe this process saw on the
 * wire, less CAPTURE_MARGIN_MS.
 */
function startEventOutboxRetention(ctx: Parameters<typeof startRelay>[0], watch: FailureWatch, logger: Logger, probe: CaptureProbe | undefined): Array<OutboxRetention<{ id: string }>> {
  const { relay: cfg } = ctx.config;
  if (ctx.config.publish.mode !== 'router' || cfg.retentionMs === 0 || probe === undefined) return [];
  const capturedAgeMs = (name: string) => () => {
    const age = probe.confirmedAgeMs(name);
    return age === undefined ? undefined : age + CAPTURE_MARGIN_MS;
  };
  const retentions = Object.entries(ctx.dbs).map(([name, db]) =>
    retentionOf(ctx, watch, db, logger.child({ table: 'event_outbox', ...(name !== 'main' && { database: name }) }), purgeEventOutboxPage, capturedAgeMs(name)),
  );
  for (const r of retentions) void r.start();
  return retentions;
}

/** Registration retried with backoff until it succeeds (or stop), then the relay loops started. */
function startLater(
  ctx: Parameters<typeof startRelay>[0],
  logger: Logger,
  register: () => Promise<SchemaIds>,
  startAll: (ids: SchemaIds) => Promise<() => Promise<void>>,
): () => Promise<void> {
  let stopping = false;
  let stopLoops: (() => Promise<void>) | undefined;
  // Retriable or not, only publishing waits: a registry refusing us now is the operator's to fix.
  const background = retryInBackground(
    async () => {
      const ids = await register();
      if (stopping) return;
      stopLoops = await startAll(ids);
    },
    { what: 'schema registration and the relay start (publishing waits)', backoff: Backoffs.registry, logger, onFailure: () => ctx.metrics.relayFailures.inc() },
  );
  return async () => {
    stopping = true;
    await background.stop();
    await stopLoops?.();
  };
}

type OutboxTarget = Readonly<{
  name: string;
  /** Its position among the databases: in the loops' ids, which must fit outbox.claimed_by (64). */
  index: number;
  db: Knex;
  schemaIds: Awaited<ReturnType<typeof registerEventSchemas>>;
  registry: ReturnType<typeof createSchemaRegistry>;
  topicsByEventType: ReturnType<typeof eventTopics>;
  /** The role's: this outbox's retention joins it. */
  watch: FailureWatch;
  logger: Logger;
}>;

/** The loops and retention of one database's outbox. */
async function startOutbox(ctx: Parameters<typeof startRelay>[0], target: OutboxTarget): Promise<() => Promise<void>> {
  const { relay: cfg } = ctx.config;
  const { db } = target;
  const idleHoldVariable = idleHoldVariableOf((await serverFlavour(db)).flavour);
  const loop = target.name === 'main' ? '' : `d${target.index}-`;
  const producers = Array.from({ length: cfg.concurrency }, (_, n) => ctx.newProducer(`producer-relay-${loop}${n}`));
  await Promise.all(producers.map((p) => p.connect()));
  try {
    return startLoops(ctx, target, producers, idleHoldVariable);
  } catch (err) {
    await Promise.all(producers.map((p) => p.disconnect().catch(() => undefined)));
    throw err;
  }
}

function startLoops(ctx: Parameters<typeof startRelay>[0], target: OutboxTarget, producers: GuardedProducer[], idleHoldVariable: ReturnType<typeof idleHoldVariableOf>): () => Promise<void> {
  const { relay: cfg } = ctx.config;
  const { db, logger, schemaIds, registry, topicsByEventType } = target;
  // The main database's loops keep their ids; another database's carry its index (its name could
  // push a 48-character instance id past the column's 64).
  const idOf = (n: number) => (target.name === 'main' ? `relay-${ctx.instanceId}/${n}` : `relay-${ctx.instanceId}/d${target.index}/${n}`);
  // Watched by the role: a loop FAILED (a deterministic failure, three times in a row) fails it.
  const loops = producers.map(
    (producer, n) =>
      target.watch.add(new OutboxRelay({
        db,
        catalogue: ctx.catalogue,
        producer,
        registry,
        schemaIds,
        registryUrl: ctx.config.registry.url,
        topicsByEventType,
        relayId: idOf(n),
        batchSize: cfg.batchSize,
        leaseMs: cfg.leaseMs,
        idleHoldVariable,
        idleDelayMs: cfg.idleMs,
        logger,
        clock: ctx.clock,
        observer: {
          published: (rows) => ctx.metrics.outboxPublished.inc(rows),
          poison: (rows) => ctx.metrics.outboxPoison.inc(rows),
          failed: () => ctx.metrics.relayFailures.inc(),
        },
      })),
  );
  const retention =
    cfg.retentionMs > 0
      ? retentionOf(ctx, target.watch, db, logger)
      : undefined;
  for (const loop of loops) void loop.start();
  void retention?.start();
  return async () => {
    await Promise.all([...loops.map((loop) => loop.stop()), retention?.stop()]);
    await Promise.all(producers.map((p) => p.disconnect()));
  };
}
