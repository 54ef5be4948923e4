/**
 * The connector `timebucket connector config` prints for a secured cluster, registered as
 * printed: with the service configured for Kafka over SASL_SSL (SCRAM-SHA-512, the stack's CA),
 * the schema history's own Kafka clients get the same security (the worker's settings are not
 * theirs), so the history topic is written through the stack's SASL_SSL listener and the
 * connector captures. Without them it cannot reach that listener and fails.
 *
 * @lane isolated
 */
import { join } from 'node:path';
import type { Admin } from 'kafkajs';
import { createKafka } from '../../../src/kafka/client';
import { config, logger, uniqueName } from '../../support/stack';
import { spawnCli } from '../../support/cli';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { deleteConnector, putConnector } from '../../support/test-connector';
import { waitFor, withTimeout } from '../../support/wait-for';

const stack = {
  saslBrokers: process.env['TB_STACK_KAFKA_SASL_BROKERS'] ?? '127.0.0.1:19094',
  saslUser: process.env['TB_STACK_KAFKA_SASL_USER'] ?? 'timebucket',
  saslPassword: process.env['TB_STACK_KAFKA_SASL_PASSWORD'] ?? 'kafka-pw-Hq4rX8mN',
  caFile: join(process.env['TB_STACK_TLS_DIR'] ?? join(__dirname, '../../../.stack/tls'), 'ca.pem'),
};

let testDb: TestDatabase;
let admin: Admin;
const name = uniqueName('tb-cdc-sasl');
const prefix = name.replace(/-/g, '');

beforeAll(async () => {
  testDb = await createTestDatabase('cdc_sasl');
  admin = createKafka(config.kafka, logger, '-test-sasl').admin();
  await admin.connect();
});

afterAll(async () => {
  await deleteConnector(name);
  await admin?.deleteTopics({ topics: (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`)) }).catch(() => undefined);
  await admin?.disconnect();
  await testDb?.drop();
});

const records = async (topic: string) => (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);

test('the printed connector for a SASL_SSL cluster runs as printed: its schema history written over SASL_SSL, the table captured', async () => {
  const printed = spawnCli(
    [
      'connector',
      'config',
      '--config-only',
      '--flavour',
      'auto',
      '--history',
      'kafka',
      '--name',
      name,
      '--server-id',
      String(300_000 + Math.floor(Math.random() * 1_000_000)),
    ]
      .concat(['--db-user', process.env['TB_CDC_USER'] ?? 'debezium', '--db-password', process.env['TB_CDC_PASSWORD'] ?? 'debezium'])
      .concat(['--kafka-user', stack.saslUser, '--kafka-password', stack.saslPassword]),
    {
      TB_DB_NAME: testDb.name,
      TB_CDC_TOPIC_PREFIX: prefix,
      TB_KAFKA_BROKERS: stack.saslBrokers,
      TB_KAFKA_SSL: 'on',
      TB_KAFKA_SSL_CA_FILE: stack.caFile,
      TB_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      TB_KAFKA_SASL_USERNAME: stack.saslUser,
      TB_KAFKA_SASL_PASSWORD: stack.saslPassword,
      TB_LOG_LEVEL: 'warn',
    },
  );
  const exit = await withTimeout('connector config to exit', printed.exited, 30_000);
  expect({ ...exit, stderr: exit.code === 0 ? '' : printed.stderr() }).toEqual({ code: 0, signal: null, stderr: '' });
  const generated = JSON.parse(printed.stdout()) as Record<string, string>;
  expect(generated).toMatchObject({
    'schema.history.internal.kafka.bootstrap.servers': stack.saslBrokers,
    'schema.history.internal.producer.security.protocol': 'SASL_SSL',
    'schema.history.internal.consumer.security.protocol': 'SASL_SSL',
    'schema.history.internal.producer.sasl.mechanism': 'SCRAM-SHA-512',
    'schema.history.internal.producer.ssl.truststore.type': 'PEM',
  });

  // The stack has one broker: the CDC topics Connect creates get one replica.
  await putConnector(name, { ...generated, 'topic.creation.default.replication.factor': '1' });
  const history = generated['schema.history.internal.kafka.topic']!;
  await waitFor(
    'the schema history written over SASL_SSL',
    async () => ((await admin.listTopics()).includes(history) && (await records(history)) > 0 ? true : undefined),
    { timeoutMs: 60_000, intervalMs: 500 },
  );

  await testDb.db('coupons').insert({ user_id: 1, status: 'ACTIVE', expire_time: testDb.db.raw('NOW(3) + INTERVAL 1 HOUR') });
  const cdc = `${prefix}.${testDb.name}.coupons`;
  await waitFor('the change captured', async () => ((await admin.listTopics()).includes(cdc) && (await records(cdc)) > 0 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
});
