/**
 * pacer_state: what each expirer's pacers (core/pacer.ts, one per database) last decided, for
 * `timebucket ctl status` beside the operator's switches. One row per deployment (`scope`, its
 * TB_GROUP_PREFIX, as control_switches), instance and database; each instance upserts its rows
 * every few seconds and deletes them when it stops, so a row not refreshed for a while belongs to
 * an instance that died (status shows only fresh ones).
 *
 * - `rate`, `health_rate`, `budget_rate`: rows a second; NULL is unlimited (unpaced).
 * - `state`: healthy, starting, backing-off or budget-bound; `limited_by`: the signal that holds it back.
 * - `budget_used`: the oldest due row's lateness as a share of its entity's budget.
 * - `updated_at`: the database clock (UTC), as every other timestamp of the service's tables.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('pacer_state', (t) => {
    t.string('scope', 191).notNullable();
    t.string('instance', 64).notNullable();
    t.string('database_name', 32).notNullable();
    t.double('rate').nullable();
    t.double('health_rate').nullable();
    t.double('budget_rate').nullable();
    t.string('state', 16).notNullable();
    t.string('limited_by', 32).nullable();
    t.double('budget_used').notNullable().defaultTo(0);
    t.specificType('updated_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
    t.primary(['scope', 'instance', 'database_name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('pacer_state');
}
