import { outboxConnectorConfig } from '../../../src/publish/outbox-connector-config';

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
