/**
 * event_outbox: the outbox Debezium's Outbox Event Router publishes (publish/outbox-connector-config.ts).
 * The expiry transaction writes one row per transition, its value already the Kafka message's:
 * Confluent-framed Avro under the registered schema id. The connector reads the row from the
 * binlog and sends `payload` to `topic` with key `entity_id` and the columns named below as
 * headers; nothing ever marks or updates a row, so the binlog carries each event once.
 *
 * - `event_key` is unique: a replayed batch inserts nothing new (INSERT IGNORE, invariant I4).
 * - `entity_id` is the key's text (the decimal id), so Connect's partitioner sees the same bytes
 *   the kafkajs relay sent; VARCHAR(20) holds every BIGINT UNSIGNED.
 * - `ce_type`, `ce_time`, `ce_dataschema` are the per-event CloudEvents headers; the constant
 *   ones (ce_source, content-type) are set by the connector, ce_specversion by its default.
 * - Rows leave by retention (publish/sql/purge-event-outbox.ts), by primary key: the binlog, not
 *   the table, is what the router reads, so a purged row has been captured or is still in the log.
 *
 * event_schema_ids: the registry's schema id of each event schema (by registry, subject and the
 * schema text's SHA-256), as the last successful registration found it, so a process can encode events while the registry is down.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('event_outbox', (t) => {
    t.bigIncrements('id').primary();
    t.string('event_key', 191).notNullable().unique('uq_event_outbox_event_key');
    t.string('topic', 249).notNullable();
    t.string('entity_id', 20).notNullable();
    t.string('event_type', 32).notNullable();
    t.string('ce_type', 128).notNullable();
    t.specificType('ce_time', 'CHAR(24)').notNullable();
    t.string('ce_dataschema', 255).notNullable();
    // CloudEvents' spec version; the insert leaves it to the default (publish/event-headers.ts CE_SPEC_VERSION).
    t.string('ce_specversion', 8).notNullable().defaultTo('1.0');
    t.specificType('payload', 'MEDIUMBLOB').notNullable();
    t.specificType('created_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
  });
  // By registry, subject and schema: some registries number a schema per subject.
  await knex.schema.createTable('event_schema_ids', (t) => {
    t.string('registry', 255).notNullable();
    t.string('subject', 255).notNullable();
    t.specificType('fingerprint', 'CHAR(64)').notNullable();
    t.string('event_type', 32).notNullable();
    t.integer('schema_id').unsigned().notNullable();
    t.specificType('registered_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
    t.primary(['registry', 'subject', 'fingerprint']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('event_schema_ids');
  await knex.schema.dropTableIfExists('event_outbox');
}
