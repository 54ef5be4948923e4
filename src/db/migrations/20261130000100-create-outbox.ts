/**
 * outbox: the local message table. The expirer inserts one row per transition in the same
 * transaction as the transition (so an event exists if and only if the transition committed);
 * the relay publishes rows to the event topics and marks them published.
 *
 * - `event_key` is unique: a replayed batch inserts nothing new (INSERT IGNORE), which is what
 *   makes at-least-once delivery into the expirer effectively exactly-once (invariant I4).
 * - `(published_at, id)` lets a relay find unpublished rows in insertion order without a scan;
 *   `claimed_by` / `claim_until` are a lease so several relays do not publish the same row.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outbox', (t) => {
    t.bigIncrements('id').primary();
    t.string('event_key', 191).notNullable().unique('uq_outbox_event_key');
    t.string('event_type', 32).notNullable();
    t.string('entity_type', 16).notNullable();
    t.bigInteger('entity_id').unsigned().notNullable();
    t.text('payload', 'mediumtext').notNullable();
    t.specificType('created_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
    t.string('claimed_by', 64).nullable();
    t.specificType('claim_until', 'DATETIME(3)').nullable();
    t.specificType('published_at', 'DATETIME(3)').nullable();
    t.index(['published_at', 'id'], 'idx_outbox_unpublished');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('outbox');
}
