/**
 * Migrations listed explicitly (rather than read from a folder) so the same list works from
 * TypeScript sources under test and from compiled JavaScript in production.
 *
 * timebucket owns only its own tables (event_outbox, event_schema_ids, scanner_cursors,
 * control_switches, service_grants, timebucket_heartbeat; the polling relay's outbox and outbox_poison were dropped in 20270101). The demo tables `coupons` and `orders` are created only for the local stack
 * (`demoTables`, on unless TB_ENV=production): in production the entities file maps the team's
 * own tables, which timebucket never creates, alters or drops. The demo migration stays in the
 * list either way, a no-op when off, so a database that once ran it keeps a valid history and a
 * rollback in production never drops a table of the team's.
 *
 * DDL in a transaction: MySQL and MariaDB commit a transaction implicitly at each DDL statement,
 * so knex's transaction around a migration does not make its DDL atomic. It stays all the same
 * (no migration declares `config = { transaction: false }`, nor the knex config
 * `disableTransactions`): while every pending migration has one, knex runs the batch in one
 * transaction, takes its migrations lock in it and reads the applied migrations again under the
 * lock, which is what lets racing `migrate`s find nothing left to run (db/migrate-latest.ts);
 * without it a process that listed the pending migrations before another finished them would
 * run them again. A migration does not open a transaction of its own after its DDL: that is a
 * savepoint outside any transaction, which knex reports as "Transaction was implicitly committed".
 */
import type { Knex } from 'knex';
import * as createCouponsAndOrders from './20261130000000-create-coupons-and-orders';
import * as createOutbox from './20261130000100-create-outbox';
import * as createScannerCursors from './20261201000000-create-scanner-cursors';
import * as createControlSwitches from './20261202000000-create-control-switches';
import * as createOutboxPoison from './20261203000000-create-outbox-poison';
import * as widenCursorAndSwitchNames from './20261210000000-widen-cursor-and-switch-names';
import * as widenCursorForLocations from './20261215000000-widen-cursor-for-locations';
import * as createEventOutbox from './20261220000000-create-event-outbox';
import * as addCouponReminderColumns from './20261225000000-add-coupon-reminder-columns';
import * as widenEventOutboxHeaders from './20261230000000-widen-event-outbox-headers';
import * as dropRelayOutbox from './20270101000000-drop-relay-outbox';
import * as createServiceGrants from './20270201000000-create-service-grants';
import * as createHeartbeat from './20270301000000-create-heartbeat';
import * as createPacerState from './20270401000000-create-pacer-state';

type Migration = { up: (knex: Knex) => Promise<void>; down: (knex: Knex) => Promise<void> };

const migrations: ReadonlyArray<readonly [string, Migration]> = [
  ['20261130000000-create-coupons-and-orders', createCouponsAndOrders],
  ['20261130000100-create-outbox', createOutbox],
  ['20261201000000-create-scanner-cursors', createScannerCursors],
  ['20261202000000-create-control-switches', createControlSwitches],
  ['20261203000000-create-outbox-poison', createOutboxPoison],
  ['20261210000000-widen-cursor-and-switch-names', widenCursorAndSwitchNames],
  ['20261215000000-widen-cursor-for-locations', widenCursorForLocations],
  ['20261220000000-create-event-outbox', createEventOutbox],
  ['20261225000000-add-coupon-reminder-columns', addCouponReminderColumns],
  ['20261230000000-widen-event-outbox-headers', widenEventOutboxHeaders],
  ['20270101000000-drop-relay-outbox', dropRelayOutbox],
  ['20270201000000-create-service-grants', createServiceGrants],
  ['20270301000000-create-heartbeat', createHeartbeat],
  ['20270401000000-create-pacer-state', createPacerState],
];

/** The migrations of the demo tables: no-ops in production. */
const DEMO: ReadonlySet<Migration> = new Set([createCouponsAndOrders, addCouponReminderColumns]);

const noop: Migration = { up: async () => undefined, down: async () => undefined };

export function migrationSource(opts: { demoTables: boolean }): Knex.MigrationSource<readonly [string, Migration]> {
  return {
    getMigrations: async () => migrations.map(([name, m]) => [name, DEMO.has(m) && !opts.demoTables ? noop : m] as const),
    getMigrationName: ([name]) => name,
    getMigration: async ([, migration]) => migration,
  };
}
