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
import { config, uniqueName } from './stack';
import { waitFor } from './wait-for';
import { secondServer } from './test-database';

const connectUrl = `http://127.0.0.1:${process.env['TB_CONNECT_PORT'] ?? '18083'}`;

export type TestConnector = Readonly<{ name: string; topicPrefix: string; config: Readonly<Record<string, string>>; remove: () => Promise<void> }>;

/**
 * `database`: the schema to capture; `opts.server`: the stack's MariaDB server holding it (1 or
 * 2); `opts.entitiesDatabase`: the entities file's name of that database (default main).
 */
export async function registerTestConnector(catalogue: EntityCatalogue, database: string, opts: { server?: 1 | 2; entitiesDatabase?: string } = {}): Promise<TestConnector> {
  const name = uniqueName('tb-cdc');
  const topicPrefix = name.replace(/-/g, '');
  const history = join(tmpdir(), `${name}.history.dat`);
  const port = opts.server === 2 ? secondServer().port : config.db.port;
  const generated = connectorConfig(catalogue, {
    name,
    database: opts.entitiesDatabase,
    flavour: 'mariadb',
    db: { host: config.db.host, port, database, user: process.env['TB_CDC_USER'] ?? 'debezium', password: process.env['TB_CDC_PASSWORD'] ?? 'debezium', tls: false },
    topicPrefix,
    // Unique among the binlog's readers (the stack's connector is 184054).
    serverId: 200_000 + Math.floor(Math.random() * 1_000_000),
    history: { kind: 'file', path: history },
    topics: { partitions: config.cdc.partitions, replicationFactor: Number(process.env['TB_KAFKA_REPLICATION_FACTOR'] ?? 1), retentionMs: config.cdc.retentionMs },
  });
  const body = { ...generated.config, 'snapshot.mode': 'no_data' };
  const put = await fetch(`${connectUrl}/connectors/${name}/config`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  if (!put.ok) throw new Error(`registering connector ${name}: HTTP ${put.status} ${await put.text()}`);
  const remove = async () => {
    await fetch(`${connectUrl}/connectors/${name}`, { method: 'DELETE', signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
    rmSync(history, { force: true });
  };
  try {
    await waitFor(
      `connector ${name} and its task RUNNING`,
      async () => {
        const res = await fetch(`${connectUrl}/connectors/${name}/status`, { signal: AbortSignal.timeout(5_000) });
        if (!res.ok) return undefined;
        const status = (await res.json()) as { connector: { state: string }; tasks: Array<{ state: string; trace?: string }> };
        const failed = [status.connector, ...status.tasks].find((s) => s.state === 'FAILED');
        if (failed !== undefined) throw new Error(`connector ${name} FAILED: ${(failed as { trace?: string }).trace?.slice(0, 800) ?? ''}`);
        return status.connector.state === 'RUNNING' && status.tasks.length > 0 && status.tasks.every((t) => t.state === 'RUNNING') ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  } catch (err) {
    await remove();
    throw err;
  }
  return { name, topicPrefix, config: body, remove };
}
