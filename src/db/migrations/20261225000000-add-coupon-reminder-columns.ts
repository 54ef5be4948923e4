/**
 * The demo coupons table gains what its reminders read (docs/reminders.md): a face value, the
 * column a digest names so that a subscriber can tier its channel (SMS for the valuable ones),
 * and the (user_id, status, expire_time) index a digest reads a user's coupons through, as seed
 * 001's wallet table has. Demo tables only (a no-op with TB_ENV=production, as their creation).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('coupons', (t) => {
    t.decimal('face_value', 10, 2).notNullable().defaultTo(0);
    t.index(['user_id', 'status', 'expire_time'], 'idx_coupons_user');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('coupons', (t) => {
    t.dropIndex(['user_id', 'status', 'expire_time'], 'idx_coupons_user');
    t.dropColumn('face_value');
  });
}
