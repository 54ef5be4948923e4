/**
 * Capture of one bench run's own database, as a deployment captures its database: the CDC
 * connector and the event_outbox connector that `timebucket connector config [--outbox]`
 * generates, under a topic prefix of the run's own, put through the stack's Connect; the CDC
 * topics applied as `topics apply` declares them. `remove()` deletes the connectors (the run
 * deletes the topics with its others).
 *
 * Why not the stack's captured database: every run would leave its rows' changes in the CDC
 * topics the `make run` group reads (a million records of lag after three hot minutes), and
 * each run would share its binlog readers with whatever the stack's database does meanwhile.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config';
import type { EntityCatalogue } from '../../src/core/entity-catalogue';
import type { Db } from '../../src/db/knex';
import { serverFlavour } from '../../src/db/sql/server-flavour';
import { connectorConfig } from '../../src/ingest/connector-config';
import { outboxConnectorConfig, outboxTopicPrefix } from '../../src/publish/outbox-connector-config';
import { cdcTopicDeclarations } from '../../src/cli/topics-apply';
import type { TopicDeclaration } from '../../src/core/topology';
import { deleteConnector, putConnector } from './connect-rest';

export type BenchCapture = Readonly<{
  /** The configuration of the run's processes: TB_DB_NAME and TB_CDC_TOPIC_PREFIX are the run's. */
  env: Readonly<Record<string, string>>;
  /** Applied before start(): the repartitioner subscribes to topics that exist. */
  cdcTopics: readonly TopicDeclaration[];
  /** Registers both connectors and waits until they run. */
  start: () => Promise<void>;
  remove: () => Promise<void>;
}>;

/** Server ids unique among the binlog's readers (the stack's connectors are 184054 and 184154). */
const serverId = () => 300_000 + Math.floor(Math.random() * 1_000_000);

export async function planBenchCapture(
  opts: Readonly<{ config: Config; catalogue: EntityCatalogue; db: Db; dbName: string; topicPrefix: string }>,
): Promise<BenchCapture> {
  const { config, catalogue, dbName, topicPrefix } = opts;
  const env = { TB_DB_NAME: dbName, TB_CDC_TOPIC_PREFIX: topicPrefix };
  const runConfig = loadConfig({ ...process.env, ...env });
  const { flavour } = await serverFlavour(opts.db);
  const db = {
    host: config.db.host,
    port: config.db.port,
    database: dbName,
    user: process.env['TB_CDC_USER'] ?? 'debezium',
    password: process.env['TB_CDC_PASSWORD'] ?? 'debezium',
    tls: false,
  };
  const histories = [join(tmpdir(), `${topicPrefix}-cdc.history.dat`), join(tmpdir(), `${topicPrefix}-outbox.history.dat`)] as const;
  const cdc = connectorConfig(catalogue, {
    name: `${topicPrefix}-cdc`,
    flavour,
    db,
    topicPrefix,
    serverId: serverId(),
    history: { kind: 'file', path: histories[0] },
    topics: {
      partitions: runConfig.cdc.partitions,
      replicationFactor: Number(process.env['TB_KAFKA_REPLICATION_FACTOR'] ?? 1),
      retentionMs: runConfig.cdc.retentionMs,
    },
  });
  const outbox = outboxConnectorConfig({
    name: `${topicPrefix}-outbox`,
    flavour,
    db,
    topicPrefix: outboxTopicPrefix(topicPrefix),
    serverId: serverId(),
    history: { kind: 'file', path: histories[1] },
  });
  const remove = async () => {
    await Promise.all([deleteConnector(cdc.name), deleteConnector(outbox.name)]);
    for (const h of histories) rmSync(h, { force: true });
  };
  const start = async () => {
    // The tables are new and empty: the CDC connector starts at the binlog's end.
    await putConnector(cdc.name, { ...cdc.config, 'snapshot.mode': 'no_data' });
    await putConnector(outbox.name, outbox.config);
  };
  return { env, cdcTopics: cdcTopicDeclarations(runConfig, catalogue), start, remove };
}
