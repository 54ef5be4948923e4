/**
 * timebucket_heartbeat: one row per writer (an expirer process, by its instance id), which it
 * updates on the primary every TB_REPLICA_HEARTBEAT_INTERVAL_MS and reads back on each replica of
 * the database (db/replica-heartbeat.ts): how far the replica has applied the primary's binlog,
 * to a fraction of a second (core/replica-lag.ts).
 *
 * - `seq`: the writer's beat number, increasing (it starts from the writer's clock in ms, so a
 *   writer restarted under the same id carries on above its last beat); what the service reads.
 * - `ts`: the primary's NOW(6) at the beat, for a person or a tool reading lag by hand
 *   (`SELECT TIMESTAMPDIFF(MICROSECOND, ts, NOW(6))` on a replica whose clock is the primary's).
 * The service account writes it (INSERT, UPDATE); the replica reader may only SELECT it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('timebucket_heartbeat', (t) => {
    t.string('writer', 64).notNullable().primary();
    t.bigInteger('seq').unsigned().notNullable();
    t.specificType('ts', 'DATETIME(6)').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('timebucket_heartbeat');
}
