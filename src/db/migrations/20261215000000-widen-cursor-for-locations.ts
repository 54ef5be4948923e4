/**
 * Table sets and several databases: a spread entity's scanner cursors are per table, keyed
 * `<key>@<database>.<table>` (reconcile/sql/claim-scan-page.ts): up to 36 + 1 + 16 + 1 + 64 =
 * 118 characters. scanner_cursors.entity: VARCHAR(97) → VARCHAR(160). A widening, no row
 * changes; the table holds a row per cursor.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE scanner_cursors MODIFY entity VARCHAR(160) NOT NULL');
}

/** Fails while a longer key exists: delete those rows first. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE scanner_cursors MODIFY entity VARCHAR(97) NOT NULL');
}
