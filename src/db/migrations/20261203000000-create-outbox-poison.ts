/**
 * outbox_poison: outbox rows the relay can never encode, moved out of the outbox.
 *
 * Before this table a poison row stayed in the outbox, unpublished, under a lease that never
 * ended (claimed_by = 'poison', claim_until 9999-12-31). That kept it in the unpublished range
 * of idx_outbox_unpublished for ever, where every claim and every backlog count read past it.
 * Now the relay moves such a row here in one transaction (same id, columns and payload, plus
 * why and who), so the unpublished range holds only rows that can still be published.
 *
 * Redrive after fixing the cause: move the row back with its id (src/publish/sql/redrive-poison.ts,
 * docs/operations.md); it is then the oldest unpublished row and the next claim takes it.
 *
 * Up also moves poison rows set aside the old way; down moves them back the old way.
 */
import type { Knex } from 'knex';

const OLD_POISON_OWNER = 'poison';
const OLD_POISON_UNTIL = '9999-12-31 00:00:00.000';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outbox_poison', (t) => {
    // The outbox row's own id, kept so a redrive puts the row back where it was in outbox order.
    t.bigInteger('id').unsigned().primary();
    t.string('event_key', 191).notNullable();
    t.string('event_type', 32).notNullable();
    t.string('entity_type', 16).notNullable();
    t.bigInteger('entity_id').unsigned().notNullable();
    t.text('payload', 'mediumtext').notNullable();
    t.specificType('created_at', 'DATETIME(3)').notNullable();
    t.string('reason', 512).notNullable();
    t.string('set_aside_by', 64).notNullable();
    t.specificType('set_aside_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
  });
  // Two statements, not a transaction of their own: MySQL and MariaDB end the migration's
  // transaction with an implicit commit at the CREATE TABLE above, so each statement commits on
  // its own either way. A nested knex transaction here was a savepoint outside any transaction,
  // whose release failed: knex's warning "Transaction was implicitly committed" on every new
  // database, for no change in what ran (migrations/index.ts says why the transaction stays).
  await knex.raw(
    `INSERT INTO outbox_poison (id, event_key, event_type, entity_type, entity_id, payload, created_at, reason, set_aside_by)
     SELECT id, event_key, event_type, entity_type, entity_id, payload, created_at,
            'set aside before outbox_poison existed: the reason is in the relay log of that time', ?
       FROM outbox WHERE claimed_by = ? AND published_at IS NULL`,
    [OLD_POISON_OWNER, OLD_POISON_OWNER],
  );
  await knex.raw('DELETE FROM outbox WHERE claimed_by = ? AND published_at IS NULL', [OLD_POISON_OWNER]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `INSERT IGNORE INTO outbox (id, event_key, event_type, entity_type, entity_id, payload, created_at, claimed_by, claim_until)
     SELECT id, event_key, event_type, entity_type, entity_id, payload, created_at, ?, ? FROM outbox_poison`,
    [OLD_POISON_OWNER, OLD_POISON_UNTIL],
  );
  await knex.schema.dropTableIfExists('outbox_poison');
}
