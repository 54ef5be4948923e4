/**
 * service_grants: what `timebucket migrate` granted the service account (TB_DB_SERVICE_USER) in
 * this database, one row per table and privilege, and per column for a column's privilege
 * (`column_name` '' for the whole table). migrate revokes only what this ledger says it granted
 * and the entities file no longer needs (db/apply-service-grants.ts): the owner cannot read
 * another account's grants without SELECT on the mysql schema, and timebucket never touches a
 * grant someone else made. The running service has no privilege on it.
 *
 * ASCII and binary: account parts and identifiers are checked to plain ASCII before they get
 * here (db/service-grants.ts accountSql, core/entity-file.ts IDENTIFIER), and a user name is
 * case-sensitive on the server.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('service_grants', (t) => {
    t.charset('ascii');
    t.collate('ascii_bin');
    t.string('account_user', 80).notNullable();
    t.string('account_host', 255).notNullable();
    t.string('table_name', 64).notNullable();
    t.string('privilege', 16).notNullable();
    t.string('column_name', 64).notNullable().defaultTo('');
    t.specificType('granted_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
    t.primary(['account_user', 'account_host', 'table_name', 'privilege', 'column_name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('service_grants');
}
