/**
 * Integration tests run against the real local stack (`make stack-up`). Fail fast, with the
 * command to run, when it is not there; then bring the application schema up to date, since
 * Debezium captures the real `coupons` and `orders` tables, and make sure Debezium has created
 * both CDC topics (it does so with each table's first change), as a deployed system's would be.
 */
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { createKafka } from '../../src/kafka/client';
import { createLogger } from '../../src/ops/logger';
import { waitFor } from './wait-for';
import { migrateLatest } from '../../src/db/migrate-latest';
import { cdcTopicOf } from '../../src/ingest/cdc-topics';

export default async function globalSetup(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createDb(config.db);
  try {
    await db.raw('SELECT 1');
  } catch (err) {
    await db.destroy();
    throw new Error(`integration tests need the local stack (MariaDB at ${config.db.host}:${config.db.port}): run \`make stack-up\` first (${String(err)})`);
  }
  const admin = createKafka(config.kafka, createLogger('warn'), '-test-setup').admin();
  try {
    // The lanes of test/support/run-lanes.js start side by side: the first migrates, the others
    // wait for its lock (db/migrate-latest.ts), as replicas migrating together would.
    await migrateLatest(db, { logger: createLogger('silent'), waitMs: 60_000 });
    await admin.connect();
    const topics = [cdcTopicOf(config.cdc, 'coupons'), cdcTopicOf(config.cdc, 'orders')];
    const existing = new Set(await admin.listTopics());
    // Expirable rows: the connector's filter (stack/connect-smt) drops every other change, so only
    // such a change reaches Kafka and makes Debezium create the topic. Due in 2099, and deleted.
    if (!existing.has(cdcTopicOf(config.cdc, 'coupons'))) {
      const [id] = await db('coupons').insert({ user_id: 0, status: 'ACTIVE', expire_time: new Date('2099-01-01T00:00:00Z') });
      await db('coupons').where({ id }).delete();
    }
    if (!existing.has(cdcTopicOf(config.cdc, 'orders'))) {
      const [id] = await db('orders').insert({ user_id: 0, status: 'UNPAID', expire_time: new Date('2099-01-01T00:00:00Z') });
      await db('orders').where({ id }).delete();
    }
    await waitFor(
      'Debezium to create the CDC topics',
      async () => {
        const now = new Set(await admin.listTopics());
        return topics.every((t) => now.has(t)) ? true : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  } finally {
    await admin.disconnect();
    await db.destroy();
  }
}
