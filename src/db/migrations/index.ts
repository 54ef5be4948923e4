/**
 * Migrations listed explicitly (rather than read from a folder) so the same list works from
 * TypeScript sources under test and from compiled JavaScript in production.
 */
import type { Knex } from 'knex';
import * as createCouponsAndOrders from './20261130000000-create-coupons-and-orders';
import * as createOutbox from './20261130000100-create-outbox';
import * as createScannerCursors from './20261201000000-create-scanner-cursors';
import * as createControlSwitches from './20261202000000-create-control-switches';
import * as createOutboxPoison from './20261203000000-create-outbox-poison';

type Migration = { up: (knex: Knex) => Promise<void>; down: (knex: Knex) => Promise<void> };

const migrations: ReadonlyArray<readonly [string, Migration]> = [
  ['20261130000000-create-coupons-and-orders', createCouponsAndOrders],
  ['20261130000100-create-outbox', createOutbox],
  ['20261201000000-create-scanner-cursors', createScannerCursors],
  ['20261202000000-create-control-switches', createControlSwitches],
  ['20261203000000-create-outbox-poison', createOutboxPoison],
];

export const migrationSource: Knex.MigrationSource<readonly [string, Migration]> = {
  getMigrations: async () => [...migrations],
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};
