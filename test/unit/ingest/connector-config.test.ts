import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEntityFile } from '../../../src/core/entity-file';
import { connectorConfig, ConnectorConfigOptions, historyConfig } from '../../../src/ingest/connector-config';

const root = join(__dirname, '../../..');
const catalogue = parseEntityFile(readFileSync(join(root, 'entities/default.json'), 'utf8'), 'entities/default.json');

const opts: ConnectorConfigOptions = {
  name: 'timebucket-cdc',
  flavour: 'mariadb',
  db: { host: 'db.example', port: 3306, database: 'shop', user: 'debezium', password: '${file:/s:password}', tls: false },
  topicPrefix: 'tbcdc',
  serverId: 7,
  history: { kind: 'kafka', brokers: ['k1:9092', 'k2:9092'], topic: 'tbcdc.schema-history.shop' },
  topics: { partitions: 4, replicationFactor: 3, retentionMs: 604_800_000 },
};

function seedCatalogue(states: string[]) {
  return parseEntityFile(
    {
      entities: [
        {
          name: 'user_coupon',
          table: 'user_coupon',
          id: 'id',
          status: { column: 'coupon_status', type: 'string' },
          transitions: [
            {
              name: 'expired',
              from: states,
              to: '已过期',
              due: { column: 'expire_at_ms', kind: 'epoch_ms' },
              index: 'i1',
              event: { type: 'A', ceType: 'a', avroName: 'x.A', idField: 'coupon_id', summary: 's' },
            },
            {
              name: 'lock_timeout',
              from: ['已锁定'],
              to: '待使用',
              due: { column: 'lock_expire_time', kind: 'datetime' },
              index: 'i2',
              event: { type: 'B', ceType: 'b', avroName: 'x.B', idField: 'coupon_id', summary: 's' },
            },
          ],
        },
        {
          name: 'task',
          table: 'task',
          id: 'id',
          status: { column: 'state', type: 'integer' },
          transitions: [
            {
              name: 'timed_out',
              from: [1, 2],
              to: 9,
              due: { column: 'deadline_s', kind: 'epoch_s' },
              index: 'i3',
              event: { type: 'C', ceType: 'c', avroName: 'x.C', idField: 'task_id', summary: 's' },
            },
          ],
        },
      ],
    },
    'seed.json',
  );
}

test('the default file: the demo tables, their filter, Kafka-kept history, the CDC topics as topics apply declares them', () => {
  const { name, config, warnings } = connectorConfig(catalogue, opts);
  expect(name).toBe('timebucket-cdc');
  expect(warnings).toEqual([]);
  expect(config).toMatchObject({
    'connector.class': 'io.debezium.connector.mariadb.MariaDbConnector',
    'database.hostname': 'db.example',
    'database.server.id': '7',
    'database.ssl.mode': 'disable',
    'database.include.list': 'shop',
    'table.include.list': 'shop\\.coupons,shop\\.orders',
    // Only what the repartitioner reads: id, status, due column.
    'column.include.list': 'shop\\.coupons\\.(id|status|expire_time|user_id),shop\\.orders\\.(id|status|expire_time)',
    'topic.prefix': 'tbcdc',
    'time.precision.mode': 'adaptive_time_microseconds',
    'predicates.notExpirable.expirable.unlisted': 'pass',
    'predicates.notExpirable.expirable.tables': 'coupons,orders',
    'predicates.notExpirable.expirable.table.coupons.column': 'status',
    'predicates.notExpirable.expirable.table.coupons.states': 'ACTIVE',
    'predicates.notExpirable.expirable.table.orders.states': 'UNPAID',
    'schema.history.internal': 'io.debezium.storage.kafka.history.KafkaSchemaHistory',
    'schema.history.internal.kafka.bootstrap.servers': 'k1:9092,k2:9092',
    'topic.creation.default.replication.factor': '3',
    'topic.creation.default.partitions': '4',
  });
  expect(Object.values(config).every((v) => typeof v === 'string')).toBe(true);
});

test('MySQL gets its own connector class and TLS mode names', () => {
  const { config } = connectorConfig(catalogue, { ...opts, flavour: 'mysql', db: { ...opts.db, tls: true } });
  expect(config['connector.class']).toBe('io.debezium.connector.mysql.MySqlConnector');
  expect(config['database.ssl.mode']).toBe('verify_identity');
  expect(connectorConfig(catalogue, { ...opts, db: { ...opts.db, tls: true } }).config['database.ssl.mode']).toBe('verify-full');
});

test("MySQL without TLS lets the driver fetch the server's key for caching_sha2_password; over TLS, and on MariaDB, it does not", () => {
  const plain = connectorConfig(catalogue, { ...opts, flavour: 'mysql', db: { ...opts.db, tls: false } }).config;
  expect(plain).toMatchObject({ 'database.ssl.mode': 'disabled', 'driver.allowPublicKeyRetrieval': 'true' });
  expect(connectorConfig(catalogue, { ...opts, flavour: 'mysql', db: { ...opts.db, tls: true } }).config).not.toHaveProperty('driver.allowPublicKeyRetrieval');
  expect(connectorConfig(catalogue, { ...opts, flavour: 'mariadb', db: { ...opts.db, tls: false } }).config).not.toHaveProperty(
    'driver.allowPublicKeyRetrieval',
  );
});

test('a verified TLS connection takes a truststore on the workers, or says it relies on the JVM one', () => {
  const withStore = connectorConfig(catalogue, {
    ...opts,
    db: { ...opts.db, tls: true, truststore: { path: '/etc/connect/db-ca.p12', password: '${file:/s:pw}' } },
  });
  expect(withStore.config).toMatchObject({
    'database.ssl.mode': 'verify-full',
    'database.ssl.truststore': '/etc/connect/db-ca.p12',
    'database.ssl.truststore.password': '${file:/s:pw}',
  });
  expect(withStore.warnings.filter((w) => w.includes('truststore'))).toEqual([]);
  const without = connectorConfig(catalogue, { ...opts, db: { ...opts.db, tls: true } });
  expect(without.config).not.toHaveProperty('database.ssl.truststore');
  expect(without.warnings).toContainEqual(expect.stringMatching(/JVM truststore \(public CAs only\): give --db-truststore/));
  // Without TLS a truststore means nothing, and is left out.
  expect(connectorConfig(catalogue, { ...opts, db: { ...opts.db, truststore: { path: '/x', password: 'p' } } }).config).not.toHaveProperty(
    'database.ssl.truststore',
  );
});

test('the filter learns each table’s status column and every from-state, non-ASCII and integer codes included', () => {
  const { config, warnings } = connectorConfig(seedCatalogue(['待使用', '已锁定']), { ...opts, history: { kind: 'file', path: '/h.dat' } });
  expect(warnings).toEqual([]);
  expect(config['predicates.notExpirable.expirable.tables']).toBe('user_coupon,task');
  expect(config['predicates.notExpirable.expirable.table.user_coupon.column']).toBe('coupon_status');
  expect(config['predicates.notExpirable.expirable.table.user_coupon.states']).toBe('待使用,已锁定');
  expect(config['predicates.notExpirable.expirable.table.task.states']).toBe('1,2');
  expect(config['schema.history.internal.file.filename']).toBe('/h.dat');
});

test('a state the filter’s list cannot hold leaves its table unfiltered, with a warning', () => {
  const { config, warnings } = connectorConfig(seedCatalogue(['active, not used']), opts);
  expect(config['predicates.notExpirable.expirable.tables']).toBe('task');
  expect(config['predicates.notExpirable.expirable.table.user_coupon.states']).toBeUndefined();
  expect(warnings).toEqual(['user_coupon: status "active, not used" cannot be listed in the filter; none of its changes is dropped at the source']);
});

describe('a table set over two databases (examples/shop/entities-split.json)', () => {
  const split = parseEntityFile(readFileSync(join(root, 'examples/shop/entities-split.json'), 'utf8'), 'entities-split.json');
  const onB = connectorConfig(split, { ...opts, database: 'shop_b', topicPrefix: 'cdcb', db: { ...opts.db, database: 'shop2' } }).config;
  const onMain = connectorConfig(split, opts).config;

  test("each database's connector captures its own tables only, each physical table with its filter rule", () => {
    expect(onB['table.include.list']).toBe('shop2\\.user_coupon_2,shop2\\.user_coupon_3');
    expect(onMain['table.include.list']).toBe('shop\\.t_order,shop\\.user_coupon_0,shop\\.user_coupon_1');
    expect(onB['predicates.notExpirable.expirable.tables']).toBe('user_coupon_2,user_coupon_3');
    expect(onB['predicates.notExpirable.expirable.table.user_coupon_3.states']).toBe('待使用,已锁定');
    // Each table's id, status and every transition's due column (expiry, and the lock's timeout).
    expect(onB['column.include.list']).toMatch(/^shop2\\\.user_coupon_2\\\.\(id\|status\|expire_at_ms\|lock_expire_time\),shop2/);
  });

  test('the tables of a set are routed into one topic per entity, the physical table kept in the key; the filter runs first', () => {
    expect(onB['transforms']).toBe('onlyExpirable,route_user_coupon');
    expect(onB).toMatchObject({
      'transforms.route_user_coupon.type': 'io.debezium.transforms.ByLogicalTableRouter',
      'transforms.route_user_coupon.topic.regex': 'cdcb\\.shop2\\.(user_coupon_2|user_coupon_3)',
      'transforms.route_user_coupon.topic.replacement': 'cdcb.shop2.user_coupon',
      'transforms.route_user_coupon.key.enforce.uniqueness': 'true',
    });
    // On main, the set's two tables are routed too; the lone table (t_order) keeps Debezium's own topic.
    expect(onMain['transforms']).toBe('onlyExpirable,route_user_coupon');
    expect(onMain['transforms.route_user_coupon.topic.regex']).toBe('tbcdc\\.shop\\.(user_coupon_0|user_coupon_1)');
    expect(onMain['transforms.route_user_coupon.topic.replacement']).toBe('tbcdc.shop.user_coupon');
  });
});

describe('the schema history on a secured cluster', () => {
  const kafka = { kind: 'kafka', brokers: ['k1:9094'], topic: 'tbcdc.schema-history.shop' } as const;

  test('plaintext: the brokers and the topic, no client security; the captured databases only', () => {
    expect(historyConfig(kafka)).toEqual({
      'schema.history.internal.store.only.captured.databases.ddl': 'true',
      'schema.history.internal': 'io.debezium.storage.kafka.history.KafkaSchemaHistory',
      'schema.history.internal.kafka.bootstrap.servers': 'k1:9094',
      'schema.history.internal.kafka.topic': 'tbcdc.schema-history.shop',
    });
  });

  test('SASL_SSL: the same settings for its producer and its consumer, the CA inline, the account quoted for JAAS', () => {
    const config = historyConfig({
      ...kafka,
      security: {
        tls: true,
        ca: { pem: '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n' },
        sasl: { mechanism: 'scram-sha-512', username: 'tb', password: 'p"w\\1' },
      },
    });
    for (const side of ['producer', 'consumer']) {
      expect(config).toMatchObject({
        [`schema.history.internal.${side}.security.protocol`]: 'SASL_SSL',
        [`schema.history.internal.${side}.sasl.mechanism`]: 'SCRAM-SHA-512',
        [`schema.history.internal.${side}.sasl.jaas.config`]:
          'org.apache.kafka.common.security.scram.ScramLoginModule required username="tb" password="p\\"w\\\\1";',
        [`schema.history.internal.${side}.ssl.truststore.type`]: 'PEM',
        [`schema.history.internal.${side}.ssl.truststore.certificates`]: '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----',
      });
    }
  });

  test('TLS alone with a CA file on the workers; SASL over plaintext with PLAIN', () => {
    expect(historyConfig({ ...kafka, security: { tls: true, ca: { file: '/etc/kafka/ca.pem' } } })).toMatchObject({
      'schema.history.internal.producer.security.protocol': 'SSL',
      'schema.history.internal.producer.ssl.truststore.location': '/etc/kafka/ca.pem',
    });
    const plain = historyConfig({ ...kafka, security: { tls: false, sasl: { mechanism: 'plain', username: '${file:/s:u}', password: '${file:/s:p}' } } });
    expect(plain['schema.history.internal.consumer.security.protocol']).toBe('SASL_PLAINTEXT');
    expect(plain['schema.history.internal.consumer.sasl.jaas.config']).toBe(
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="${file:/s:u}" password="${file:/s:p}";',
    );
    expect(Object.keys(plain).some((k) => k.includes('truststore'))).toBe(false);
  });
});
