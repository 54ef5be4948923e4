/**
 * The Debezium connector that publishes a database's event_outbox through the Outbox Event
 * Router (io.debezium.transforms.outbox.EventRouter), as Kafka Connect's REST API takes it: what
 * `timebucket connector config --outbox` prints and what the local stack registers. One per
 * database, beside that database's CDC connector (ingest/connector-config.ts): its converters
 * differ, since the value is already the message's bytes.
 *
 * Each row becomes one message (publish/event-headers.ts):
 *   topic    the row's `topic`                     (route.by.field, replacement ${routedByValue})
 *   key      `entity_id`, the decimal id as UTF-8   (StringConverter, so Kafka's default
 *            partitioner and kafkajs's DefaultPartitioner pick the same partition for an id)
 *   value    `payload`, Confluent-framed Avro        (ByteArrayConverter: passed through untouched)
 *   headers  event_key, event_type, ce_id (= event_key), ce_type, ce_subject (= entity_id),
 *            ce_time, ce_dataschema and ce_specversion (its column's default) from the row;
 *            ce_source and content-type constant (InsertHeader); the router's own `id` header
 *            dropped (DropHeaders), and Debezium's __debezium.context.* headers turned off.
 * Only inserts are published: updates and deletes (retention) are skipped at the source, and
 * no tombstones are written. Per-entity order is binlog order: one task, and Connect's
 * producer sends one request at a time per partition.
 *
 * The initial snapshot publishes the rows already in the table when the connector first starts
 * (within retention): nothing written before the connector existed is lost.
 *
 * Pure: the caller supplies the server flavour and secrets.
 */
import { CE_SOURCE, CONTENT_TYPE } from './event-headers';
import { connectionConfig, historyConfig, type ConnectorConfigOptions } from '../ingest/connector-config';

export type OutboxConnectorOptions = Omit<ConnectorConfigOptions, 'topics' | 'database'>;

/** The row's columns as headers: `column:header:name`, the router's placement syntax. */
const HEADER_COLUMNS: ReadonlyArray<readonly [column: string, header: string]> = [
  ['event_key', 'event_key'],
  ['event_type', 'event_type'],
  ['event_key', 'ce_id'],
  ['ce_type', 'ce_type'],
  ['entity_id', 'ce_subject'],
  ['ce_dataschema', 'ce_dataschema'],
  ['ce_time', 'ce_time'],
  // A column (its default), not InsertHeader: that transform parses its literal, and 1.0 comes out as 1.
  ['ce_specversion', 'ce_specversion'],
];

const CONSTANT_HEADERS: ReadonlyArray<readonly [name: string, header: string, value: string]> = [
  ['ceSource', 'ce_source', CE_SOURCE],
  ['contentType', 'content-type', CONTENT_TYPE],
];

/** Its topic.prefix, which names its metrics (no data topic carries it): its own, beside the capture connector's. */
export function outboxTopicPrefix(cdcTopicPrefix: string): string {
  return `${cdcTopicPrefix}-outbox`;
}

export function outboxConnectorConfig(opts: OutboxConnectorOptions): Readonly<{ name: string; config: Readonly<Record<string, string>> }> {
  const constants: Record<string, string> = {};
  for (const [name, header, value] of CONSTANT_HEADERS) {
    constants[`transforms.${name}.type`] = 'org.apache.kafka.connect.transforms.InsertHeader';
    constants[`transforms.${name}.header`] = header;
    constants[`transforms.${name}.value.literal`] = value;
  }
  const config: Record<string, string> = {
    ...connectionConfig(opts),
    // Names the connector's metrics, heartbeats and history; no data topic carries it (routed).
    'topic.prefix': opts.topicPrefix,
    'database.include.list': opts.db.database,
    'table.include.list': `${opts.db.database}\\.event_outbox`,
    'include.schema.changes': 'false',
    'skipped.operations': 'u,d,t',
    'tombstones.on.delete': 'false',
    'snapshot.mode': 'initial',
    'binary.handling.mode': 'bytes',
    // Debezium 3 adds __debezium.context.* headers to every record; subscribers must see only ours.
    'extended.headers.enabled': 'false',
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
    'header.converter': 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
    transforms: ['outbox', 'dropRouterId', ...CONSTANT_HEADERS.map(([name]) => name)].join(','),
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    'transforms.outbox.table.field.event.id': 'id',
    'transforms.outbox.table.field.event.key': 'entity_id',
    'transforms.outbox.table.field.event.payload': 'payload',
    'transforms.outbox.route.by.field': 'topic',
    'transforms.outbox.route.topic.replacement': '${routedByValue}',
    'transforms.outbox.table.fields.additional.placement': HEADER_COLUMNS.map(([column, header]) => `${column}:header:${header}`).join(','),
    'transforms.outbox.table.expand.json.payload': 'false',
    'transforms.dropRouterId.type': 'org.apache.kafka.connect.transforms.DropHeaders',
    'transforms.dropRouterId.headers': 'id',
    ...constants,
    // No topic.creation.* settings: the event topics exist (`topics apply`), the connector
    // creates none. Connect's source producer already sends with acks=all, one request in
    // flight per connection, and retries without a deadline. A hot minute publishes tens of
    // thousands of events a second: fuller produce requests cost the worker and the brokers
    // less per event, for at most 5 ms more latency (the per-connector override needs the
    // worker's connector.client.config.override.policy at its default, All).
    'producer.override.linger.ms': '5',
    'producer.override.batch.size': '262144',
    ...historyConfig(opts.history),
    // It only ever captures event_outbox: no other table's structure is read or kept.
    'schema.history.internal.store.only.captured.tables.ddl': 'true',
  };
  return { name: opts.name, config };
}
