/**
 * A Debezium connector of the test's own, capturing the tables an entities file maps in a test
 * database, configured exactly as `timebucket connector config` prints it (ingest/connector-config.ts)
 * and put through the stack's Connect REST API, as a deployment would. It starts at the binlog's
 * current end (snapshot.mode no_data: the tables are new and empty) and `remove()` deletes it.
 *
 * Its topic prefix is its own: Debezium names a connector's JMX metrics after topic.prefix, and a
 * second connector under a prefix in use waits a minute per metric group before it streams. So
 * a pipeline reading it sets TB_CDC_TOPIC_PREFIX to `topicPrefix`.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityCatalogue } from '../../src/core/entity-catalogue';
import { connectorConfig } from '../../src/ingest/connector-config';
import { outboxConnectorConfig } from '../../src/publish/outbox-connector-config';
import { config, uniqueName } from './stack';
import { deleteConnector, putConnector } from '../../bench/lib/connect-rest';
import { secondServer } from './test-database';
import { stackFlavour } from './stack-flavour';

export type TestConnector = Readonly<{ name: string; topicPrefix: string; config: Readonly<Record<string, string>>; remove: () => Promise<void> }>;

/**
 * `database`: the schema to capture; `opts.server`: the stack's database server holding it (1 or
 * 2); `opts.entitiesDatabase`: the entities file's name of that database (default main).
 */
export async function registerTestConnector(
  catalogue: EntityCatalogue,
  database: string,
  opts: { server?: 1 | 2; entitiesDatabase?: string } = {},
): Promise<TestConnector> {
  const name = uniqueName('tb-cdc');
  const topicPrefix = name.replace(/-/g, '');
  const history = join(tmpdir(), `${name}.history.dat`);
  const port = opts.server === 2 ? secondServer().port : config.db.port;
  const generated = connectorConfig(catalogue, {
    name,
    database: opts.entitiesDatabase,
    flavour: stackFlavour(opts.server ?? 1),
    db: {
      host: config.db.host,
      port,
      database,
      user: process.env['TB_CDC_USER'] ?? 'debezium',
      password: process.env['TB_CDC_PASSWORD'] ?? 'debezium',
      tls: false,
    },
    topicPrefix,
    // Unique among the binlog's readers (the stack's connector is 184054).
    serverId: 200_000 + Math.floor(Math.random() * 1_000_000),
    history: { kind: 'file', path: history },
    topics: {
      partitions: config.cdc.partitions,
      replicationFactor: Number(process.env['TB_KAFKA_REPLICATION_FACTOR'] ?? 1),
      retentionMs: config.cdc.retentionMs,
    },
  });
  const body = { ...generated.config, 'snapshot.mode': 'no_data' };
  const remove = async () => {
    await deleteConnector(name);
    rmSync(history, { force: true });
  };
  try {
    await putConnector(name, body);
  } catch (err) {
    await remove();
    throw err;
  }
  return { name, topicPrefix, config: body, remove };
}

/**
 * The event_outbox connector of a test database, configured exactly as
 * `timebucket connector config --outbox` prints it (publish/outbox-connector-config.ts). Its
 * offsets are the stack's Connect worker's (by connector name) and its schema history a file of
 * its own: `register()` again after Connect restarts resumes where the last offset flush left it.
 */
export type TestOutboxConnector = Readonly<{ name: string; register: () => Promise<void>; remove: () => Promise<void> }>;

export async function registerOutboxConnector(database: string, opts: { server?: 1 | 2 } = {}): Promise<TestOutboxConnector> {
  const name = uniqueName('tb-outbox');
  const history = join(tmpdir(), `${name}.history.dat`);
  const port = opts.server === 2 ? secondServer().port : config.db.port;
  const generated = outboxConnectorConfig({
    name,
    flavour: stackFlavour(opts.server ?? 1),
    db: {
      host: config.db.host,
      port,
      database,
      user: process.env['TB_CDC_USER'] ?? 'debezium',
      password: process.env['TB_CDC_PASSWORD'] ?? 'debezium',
      tls: false,
    },
    topicPrefix: name.replace(/-/g, ''),
    serverId: 200_000 + Math.floor(Math.random() * 1_000_000),
    history: { kind: 'file', path: history },
  });
  const connector: TestOutboxConnector = {
    name,
    register: () => putConnector(name, generated.config),
    remove: async () => {
      await deleteConnector(name);
      rmSync(history, { force: true });
    },
  };
  try {
    await connector.register();
  } catch (err) {
    await connector.remove();
    throw err;
  }
  return connector;
}

export { deleteConnector, putConnector } from '../../bench/lib/connect-rest';
