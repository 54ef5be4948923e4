/**
 * scanner_cursors: where the compensation scanner stands, one row per entity. Scanner
 * instances share it: each claims the next page of overdue rows under this row's lock (a short
 * transaction), so several instances split a pass between them without repeating a page and
 * without a coordinator. A pass scans rows overdue as of its start (`pass_started_at` minus the
 * grace period); `last_pass_completed_at` says when one last went through (a metric, and when
 * the next pass may begin).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('scanner_cursors', (t) => {
    t.string('entity', 16).primary();
    t.specificType('pass_started_at', 'DATETIME(3)').nullable();
    t.specificType('pass_until', 'DATETIME(3)').nullable();
    t.specificType('cursor_expire_time', 'DATETIME(3)').nullable();
    t.bigInteger('cursor_id').unsigned().nullable();
    t.specificType('last_pass_completed_at', 'DATETIME(3)').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('scanner_cursors');
}
