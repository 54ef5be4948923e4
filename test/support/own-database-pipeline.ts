/**
 * A pipeline on a database of the test's own: the database (migrated, then `tables` created),
 * a CDC connector of its own as `timebucket connector config` generates it for `entities`, the
 * event_outbox connector unless `outbox: false`, and the test pipeline reading them, its CDC
 * topics applied. Not started: the test starts the roles it wants. `stop()` tears it all down,
 * each part even if another fails to stop.
 */
import { parseEntityFile } from '../../src/core/entity-file';
import type { Db } from '../../src/db/knex';
import { applyCdcTopics, createTestPipeline, TestPipeline } from './pipeline';
import { createTestDatabase, TestDatabase } from './test-database';
import { registerOutboxConnector, registerTestConnector, TestConnector, type TestOutboxConnector } from './test-connector';

export type OwnDatabasePipeline = Readonly<{
  database: TestDatabase;
  connector: TestConnector;
  pipeline: TestPipeline;
  stop: () => Promise<void>;
}>;

export async function ownDatabasePipeline(
  label: string,
  entities: unknown,
  opts: { tables?: (db: Db) => Promise<void>; outbox?: boolean; env?: Record<string, string>; schemas?: 'register' | 'later' } = {},
): Promise<OwnDatabasePipeline> {
  const catalogue = parseEntityFile(entities, `${label} entities`);
  const database = await createTestDatabase(label);
  let connector: TestConnector | undefined;
  let outbox: TestOutboxConnector | undefined;
  let pipeline: TestPipeline | undefined;
  const stop = async () => {
    const results = await Promise.allSettled([pipeline?.stopAll()]);
    results.push(...(await Promise.allSettled([connector?.remove(), outbox?.remove()])));
    results.push(...(await Promise.allSettled([database.drop()])));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  try {
    await opts.tables?.(database.db);
    connector = await registerTestConnector(catalogue, database.name);
    if (opts.outbox !== false) outbox = await registerOutboxConnector(database.name);
    pipeline = await createTestPipeline({
      entities,
      schemas: opts.schemas,
      env: { TB_DB_NAME: database.name, TB_CDC_TOPIC_PREFIX: connector.topicPrefix, ...opts.env },
    });
    await applyCdcTopics(pipeline);
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  return { database, connector, pipeline, stop };
}
