import { outboxConnectorConfig } from '../../../src/publish/outbox-connector-config';
import { outboxConnectorProblems, type ConnectorView } from '../../../src/ingest/connector-check';
import { connectorName, derivedServerId } from '../../../src/ingest/connector-names';

const base = {
  name: 'timebucket-outbox',
  db: { host: 'db.internal', port: 3306, database: 'shop', user: '${file:/s:user}', password: '${file:/s:password}', tls: true },
  topicPrefix: 'tbcdc-outbox',
  serverId: 184154,
  history: { kind: 'kafka', brokers: ['k1:9092', 'k2:9092'], topic: 'tbcdc.schema-history.outbox.shop' },
} as const;

describe('outboxConnectorConfig', () => {
  test("captures the database's event_outbox alone, inserts only, the value's bytes untouched", () => {
    const { name, config } = outboxConnectorConfig({ ...base, flavour: 'mariadb' });
    expect(name).toBe('timebucket-outbox');
    expect(config).toMatchObject({
      'connector.class': 'io.debezium.connector.mariadb.MariaDbConnector',
      'tasks.max': '1',
      'database.include.list': 'shop',
      'table.include.list': 'shop\\.event_outbox',
      'skipped.operations': 'u,d,t',
      'tombstones.on.delete': 'false',
      'extended.headers.enabled': 'false',
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
      'database.ssl.mode': 'verify-full',
      'schema.history.internal.kafka.topic': 'tbcdc.schema-history.outbox.shop',
    });
  });

  test('routes by the topic column, keys by entity_id, and puts the CloudEvents attributes in headers', () => {
    const { config } = outboxConnectorConfig({ ...base, flavour: 'mysql' });
    expect(config['connector.class']).toBe('io.debezium.connector.mysql.MySqlConnector');
    expect(config['database.ssl.mode']).toBe('verify_identity');
    expect(config).toMatchObject({
      'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
      'transforms.outbox.route.by.field': 'topic',
      'transforms.outbox.route.topic.replacement': '${routedByValue}',
      'transforms.outbox.table.field.event.key': 'entity_id',
      'transforms.outbox.table.field.event.payload': 'payload',
      'transforms.dropRouterId.headers': 'id',
      'transforms.ceSource.value.literal': '/timebucket/expirer',
      'transforms.contentType.value.literal': 'application/avro',
    });
    const placed = config['transforms.outbox.table.fields.additional.placement']!.split(',').map((p) => p.split(':'));
    expect(placed.map(([, where, header]) => `${where}:${header}`).sort()).toEqual(
      ['ce_dataschema', 'ce_id', 'ce_specversion', 'ce_subject', 'ce_time', 'ce_type', 'event_key', 'event_type'].map((h) => `header:${h}`),
    );
    expect(config['transforms']!.split(',')).toEqual(['outbox', 'dropRouterId', 'ceSource', 'contentType']);
    // No topic creation: the event topics are `topics apply`'s.
    expect(Object.keys(config).filter((k) => k.startsWith('topic.creation'))).toEqual([]);
  });
});

describe('outboxConnectorProblems: a RUNNING outbox connector per database, as generated', () => {
  const { config: wanted } = outboxConnectorConfig({ ...base, flavour: 'mariadb' });
  const view = (config: Record<string, string>, state = 'RUNNING', tasks = ['RUNNING']): ConnectorView => ({
    name: 'tb-outbox',
    config,
    state,
    taskStates: tasks,
  });

  test('the generated connector, running, satisfies it', () => {
    expect(outboxConnectorProblems(wanted, [view({ ...wanted })], 'shop', 'main')).toEqual([]);
  });

  test("none for the database, another deployment's, a paused one and one without the router are each named with the fix", () => {
    expect(outboxConnectorProblems(wanted, [], 'shop', 'shop_b')).toEqual([
      'no connector publishes shop.event_outbox under topic.prefix tbcdc-outbox: its events stay in the table; register the output of `timebucket connector config --outbox --database shop_b` (PUT /connectors/<name>/config with --config-only)',
    ]);
    expect(outboxConnectorProblems(wanted, [view({ ...wanted, 'topic.prefix': 'other-outbox' })], 'shop', 'main')[0]).toMatch(
      /^no connector publishes shop\.event_outbox .*; tb-outbox \(topic\.prefix other-outbox\) read it for another deployment/,
    );
    expect(outboxConnectorProblems(wanted, [view({ ...wanted }, 'PAUSED', ['PAUSED'])], 'shop', 'main')).toEqual([
      'connector tb-outbox publishes shop.event_outbox but is PAUSED with tasks [PAUSED]: its events wait in the table; look at its status (GET /connectors/tb-outbox/status)',
    ]);
    const withoutHeaders = Object.fromEntries(Object.entries(wanted).filter(([k]) => k !== 'transforms.outbox.table.fields.additional.placement'));
    expect(outboxConnectorProblems(wanted, [view(withoutHeaders)], 'shop', 'main')).toEqual([
      expect.stringMatching(/^connector tb-outbox reads shop\.event_outbox without the generated Outbox Event Router/),
    ]);
  });
});

describe('connector names and server ids, derived from the deployment', () => {
  test('names: <group prefix>-cdc | -outbox, the database after them but for main', () => {
    expect([connectorName('timebucket', 'cdc', 'main'), connectorName('timebucket', 'outbox', 'shop_b'), connectorName('tb.eu', 'outbox', 'main')]).toEqual([
      'timebucket-cdc',
      'timebucket-outbox-shop_b',
      'tb.eu-outbox',
    ]);
  });

  test('server ids: stable, in range, different for two deployments, two kinds and two schemas', () => {
    const ids = [
      derivedServerId('timebucket', 'cdc', 'shop'),
      derivedServerId('timebucket', 'outbox', 'shop'),
      derivedServerId('tb.eu', 'cdc', 'shop'),
      derivedServerId('timebucket', 'cdc', 'shop_b'),
    ];
    expect(new Set(ids).size).toBe(4);
    expect(derivedServerId('timebucket', 'cdc', 'shop')).toBe(ids[0]);
    for (const id of ids) expect(id >= 400_000 && id < 400_000 + 2 ** 31 && id <= 2 ** 32 - 1).toBe(true);
  });
});
