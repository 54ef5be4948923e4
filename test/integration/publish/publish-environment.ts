/**
 * What the publish tests run against: a database of the file's own (migrated), a Kafka admin and
 * an idempotent producer, opened before the file's tests and closed after them. Not a test file.
 */
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { config, logger } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

export type PublishEnvironment = { testDb: TestDatabase; db: Db; kafka: Kafka; admin: Admin; producer: Producer };

/** Registers the file's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function usePublishEnvironment(label: string): Readonly<PublishEnvironment> {
  const env = {} as PublishEnvironment;
  beforeAll(async () => {
    env.testDb = await createTestDatabase(label);
    env.db = env.testDb.db;
    env.kafka = createKafka(config.kafka, logger, '-test');
    env.admin = env.kafka.admin();
    env.producer = env.kafka.producer({ idempotent: true });
    await Promise.all([env.admin.connect(), env.producer.connect()]);
  });
  afterAll(async () => {
    await Promise.all([env.admin?.disconnect(), env.producer?.disconnect()]);
    await env.testDb?.drop();
  });
  return env;
}
