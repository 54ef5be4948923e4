/**
 * coupons and orders, with their state machines enforced by CHECK constraints.
 *
 * Coupon:  INIT → ACTIVE → LOCKED → USED
 *                  ACTIVE → EXPIRED            (timebucket, at expire_time)
 *                  LOCKED → ACTIVE             (its order was cancelled: the lock is released)
 *          any non-terminal → INVALID           (revoked by an operator)
 *   LOCKED is never expired directly: the order holding it decides first.
 *
 * Order:   UNPAID → PAID → FINISHED
 *          UNPAID → CANCELLED                   (timebucket, at expire_time, reason TIMEOUT)
 *
 * Both tables carry `(status, expire_time, id)`: the compensation scanner pages through
 * "status = X AND expire_time <= ?" in id order on it without a filesort, and the expirer's
 * guarded update reads the same columns. expire_time is DATETIME(3) in UTC: millisecond
 * precision, and no time-zone conversion by the server (TIMESTAMP would convert).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('coupons', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('user_id').unsigned().notNullable();
    t.string('status', 16).notNullable().defaultTo('INIT');
    t.specificType('expire_time', 'DATETIME(3)').notNullable();
    t.bigInteger('locked_order_id').unsigned().nullable();
    t.specificType('expired_at', 'DATETIME(3)').nullable();
    t.integer('version').unsigned().notNullable().defaultTo(0);
    t.specificType('created_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
    t.specificType('updated_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)'));
    t.index(['status', 'expire_time', 'id'], 'idx_coupons_status_expire_id');
    t.index(['locked_order_id'], 'idx_coupons_locked_order');
    t.check("status IN ('INIT','ACTIVE','LOCKED','USED','EXPIRED','INVALID')", [], 'chk_coupons_status');
  });

  await knex.schema.createTable('orders', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('user_id').unsigned().notNullable();
    t.string('status', 16).notNullable().defaultTo('UNPAID');
    t.bigInteger('coupon_id').unsigned().nullable();
    t.specificType('expire_time', 'DATETIME(3)').notNullable();
    t.specificType('cancel_time', 'DATETIME(3)').nullable();
    t.string('cancel_reason', 32).nullable();
    t.integer('version').unsigned().notNullable().defaultTo(0);
    t.specificType('created_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3)'));
    t.specificType('updated_at', 'DATETIME(3)').notNullable().defaultTo(knex.raw('CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)'));
    t.index(['status', 'expire_time', 'id'], 'idx_orders_status_expire_id');
    t.index(['coupon_id'], 'idx_orders_coupon');
    t.check("status IN ('UNPAID','PAID','CANCELLED','FINISHED')", [], 'chk_orders_status');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('orders');
  await knex.schema.dropTableIfExists('coupons');
}
