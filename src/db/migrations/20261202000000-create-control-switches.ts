/**
 * control_switches: the operator's pause and throttle switches (`timebucket ctl`), one row per
 * deployment (`scope`) and switch (`what`: coupon, order or scanner). Every process polls its
 * scope's rows (a primary-key range read of at most three rows) every TB_CONTROL_POLL_MS.
 *
 * - `scope` is the deployment's TB_GROUP_PREFIX: a deployment's instances share it (they share
 *   their consumer groups too), and two deployments on one database (or the tests' pipelines,
 *   which all write to the captured `timebucket` database) never see each other's switches.
 * - No row means the default: running, not throttled.
 * - `per_second` NULL: no throttle. `updated_by` / `updated_at` (database clock, UTC) / `reason`
 *   describe the last change, for `ctl status` and the instances' logs.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('control_switches', (t) => {
    t.string('scope', 191).notNullable();
    t.string('what', 16).notNullable();
    t.boolean('paused').notNullable().defaultTo(false);
    t.double('per_second').nullable();
    t.string('reason', 255).nullable();
    t.string('updated_by', 64).notNullable();
    t.specificType('updated_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
    t.primary(['scope', 'what']);
    t.check("what IN ('coupon','order','scanner')", [], 'chk_control_switches_what');
    t.check('per_second IS NULL OR per_second > 0', [], 'chk_control_switches_per_second');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('control_switches');
}
