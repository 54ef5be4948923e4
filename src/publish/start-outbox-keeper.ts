/**
 * Wires the outbox-keeper role: Debezium's Outbox Event Router publishes every event_outbox row
 * from the binlog, and this role keeps the table honest and bounded:
 *   - the capture probe (capture-probe.ts): a probe row written into each database's
 *     event_outbox every TB_OUTBOX_PROBE_INTERVAL_MS and read back from the probe topic, its lag
 *     timebucket_outbox_capture_lag_seconds{database};
 *   - retention (outbox-retention.ts), per database when TB_OUTBOX_RETENTION_MS > 0: rows older
 *     than the retention and than the outbox connector's committed offset, read from Connect's
 *     REST API (TB_CONNECT_URL; connector-watermark.ts), so a row whose event Kafka does not hold
 *     is kept. Not the probe's watermark: a probe seen proves a read, not a publication.
 * It never calls the schema registry (`timebucket schemas register` does, at deployment).
 */
import type { Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Clock } from '../core/clock';
import type { Logger } from '../ops/logger';
import { OutboxRetention } from './outbox-retention';
import { captureProbe } from './capture-probe';
import { probeTopic, type Topology } from '../core/topology';
import type { Metrics } from '../ops/metrics';
import { group, type Group } from '../runtime/group';
import { connectorWatermark, type PublishedWatermark } from './connector-watermark';
import { outboxTopicPrefix } from './outbox-connector-config';

// Retention pages: 1000 rows are one short DELETE; the pause keeps a day's worth of a hot minute
// (a million rows) from crowding the database, at several thousand rows a second. A pass that
// found nothing more to delete waits a minute: retention is measured in hours.
const RETENTION_BATCH_SIZE = 1_000;
const RETENTION_PAUSE_MS = 100;
const RETENTION_INTERVAL_MS = 60_000;
// A transition's transaction writes its event_outbox row before it commits: one that began
// before the committed record's and committed after it is behind that record in the binlog.
// Retention keeps rows this much younger than the watermark as well, far longer than any
// expiry transaction (and than any skew of the database's clock from one second to the next).
const CAPTURE_MARGIN_MS = 60_000;

export type OutboxKeeperContext = Readonly<{
  config: Pick<Config, 'groupPrefix' | 'publish' | 'consumer' | 'databases'>;
  topology: Topology;
  /** A pool per database (config.databases): each one's event_outbox is probed and purged. */
  dbs: Readonly<Record<string, Knex>>;
  /** For the capture probe's consumer. */
  kafka: Pick<Kafka, 'consumer'>;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  metrics: Pick<Metrics, 'captureProbeFailures' | 'trackCaptureLag' | 'outboxPurged' | 'retentionFailures'>;
}>;

export async function startOutboxKeeper(ctx: OutboxKeeperContext): Promise<Group> {
  const logger = ctx.logger.child({ role: 'outbox-keeper' });
  const groupId = `${ctx.config.groupPrefix}.probe-${ctx.instanceId}`;
  // A reader down longer than the stall limit, or a writer FAILED, shows on /healthz.
  const probe = captureProbe({
    dbs: ctx.dbs,
    topic: probeTopic(ctx.topology),
    // A group per process: each process sees every probe and tracks its own.
    group: groupId,
    // A probe record ends the broker's wait at once: the wait only sets how often an idle topic is asked.
    newConsumer: () => ctx.kafka.consumer({ groupId, maxWaitTimeInMs: 1_000 }),
    intervalMs: ctx.config.publish.probeIntervalMs,
    stallMs: ctx.config.consumer.stallMs,
    clock: ctx.clock,
    logger,
    onWriteFailed: () => ctx.metrics.captureProbeFailures.inc(),
  });
  ctx.metrics.trackCaptureLag(() => probe.lagSeconds());
  const { connectUrl } = ctx.config.publish;
  if (ctx.config.publish.retentionMs > 0 && connectUrl === undefined)
    logger.warn('TB_CONNECT_URL is not set: outbox retention cannot read what the outbox connectors have published, and deletes nothing');
  const published = (name: string): (() => Promise<PublishedWatermark>) => {
    if (connectUrl === undefined) return async () => ({ waiting: 'TB_CONNECT_URL is not set' });
    const topicPrefix = outboxTopicPrefix(ctx.config.databases[name]!.cdcTopicPrefix);
    return connectorWatermark({ connectUrl, topicPrefix, marginMs: CAPTURE_MARGIN_MS });
  };
  const retentions =
    ctx.config.publish.retentionMs === 0
      ? []
      : Object.entries(ctx.dbs).map(([name, db]) => [
          `outbox retention ${name}`,
          new OutboxRetention({
            db,
            published: published(name),
            retentionMs: ctx.config.publish.retentionMs,
            batchSize: RETENTION_BATCH_SIZE,
            pauseMs: RETENTION_PAUSE_MS,
            intervalMs: RETENTION_INTERVAL_MS,
            logger: logger.child({ table: 'event_outbox', ...(name !== 'main' && { database: name }) }),
            observer: { purged: (rows) => ctx.metrics.outboxPurged.inc(rows), failed: (_err, kind) => ctx.metrics.retentionFailures.inc({ kind }) },
          }).loop,
        ]);
  // Independent of each other: stopped together. Health names every part down; the first FAILED fails the role.
  const keeper = group('outbox-keeper', { 'capture probe': probe, ...Object.fromEntries(retentions) }, { stopOrder: 'together' });
  await keeper.start();
  return keeper;
}
