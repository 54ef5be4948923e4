/**
 * event_outbox's CloudEvents header columns as wide as what fills them: `ce_type` holds the
 * entities file's `ceType` (at most 200 characters, core/entity-file.ts), `ce_dataschema` the
 * registry URL plus `/schemas/ids/<id>` (TB_REGISTRY_URL is at most 990 characters,
 * config-schema.ts). At 128 and 255 the transaction's INSERT IGNORE cut longer values short
 * without a word. A widening, no row changes; both stay within a two-byte length prefix, so
 * the servers change them in place.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE event_outbox MODIFY ce_type VARCHAR(200) NOT NULL, MODIFY ce_dataschema VARCHAR(1024) NOT NULL');
}

/** Fails while a longer value exists: let retention delete those rows first. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE event_outbox MODIFY ce_type VARCHAR(128) NOT NULL, MODIFY ce_dataschema VARCHAR(255) NOT NULL');
}
