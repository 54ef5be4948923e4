import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ColumnInfo, SchemaInfo } from '../../../src/core/column-info';
import { parseEntityFile } from '../../../src/core/entity-file';
import { mappedTableGrants, OWN_TABLE_GRANTS } from '../../../src/db/service-grants';
import { revokeStatement, serviceGrantStatements } from '../../../src/db/sql/grant-statements';
import { loadConfig } from '../../../src/config';
import { revokePlan } from '../../../src/db/apply-service-grants';
import { grantItems } from '../../../src/db/sql/service-grant-ledger';

const catalogue = parseEntityFile(readFileSync(join(__dirname, '../../../entities/default.json'), 'utf8'), 'entities/default.json');
const column = (name: string, autoUpdated = false): ColumnInfo => ({
  name,
  dataType: 'datetime',
  columnType: 'datetime(3)',
  nullable: false,
  maxChars: null,
  charset: null,
  autoUpdated,
});
// What information_schema says of the demo tables, as far as the grants care: updated_at is ON UPDATE.
const schema: SchemaInfo = new Map(
  ['coupons', 'orders'].map((t) => [
    `main.${t}`,
    {
      name: t,
      columns: new Map([
        ['updated_at', column('updated_at', true)],
        ['created_at', column('created_at')],
      ]),
      indexes: [],
    },
  ]),
);

test('grants read only the columns the statements read and update only the columns a transition or an effect changes', () => {
  const statements = serviceGrantStatements('timebucket', { user: 'timebucket_app', host: '%' }, [
    ...mappedTableGrants(catalogue, schema),
    ...OWN_TABLE_GRANTS,
  ]);
  // The coupon reads: id, status, its due column; its expiry's event columns (user_id, version,
  // which it increments); its reminders' and digest's (face_value, the digest's user user_id);
  // the order's release, through locked_order_id. It writes its expiry (status, expired_at,
  // version) and the release (locked_order_id). expired_at is written with the clock, never read.
  expect(statements[0]).toBe(
    "GRANT SELECT (`id`, `status`, `expire_time`, `user_id`, `version`, `face_value`, `locked_order_id`), UPDATE (`status`, `expired_at`, `version`, `locked_order_id`, `updated_at`) ON `timebucket`.`coupons` TO 'timebucket_app'@'%'",
  );
  // cancel_reason, a constant assigned, is read by replay (done or stale); cancel_time is not.
  expect(statements[1]).toBe(
    "GRANT SELECT (`id`, `status`, `expire_time`, `user_id`, `coupon_id`, `version`, `cancel_reason`), UPDATE (`status`, `cancel_time`, `cancel_reason`, `version`, `updated_at`) ON `timebucket`.`orders` TO 'timebucket_app'@'%'",
  );
  expect(statements.filter((s) => /`(coupons|orders)`/.test(s)).every((s) => !/GRANT SELECT,|GRANT SELECT ON/.test(s))).toBe(true);
  expect(statements.join('\n')).not.toMatch(/ALL PRIVILEGES|DROP|ALTER|CREATE|GRANT OPTION|\*\.\*|created_at/);
  expect(statements.filter((s) => /`(coupons|orders)`/.test(s)).every((s) => !/DELETE|INSERT/.test(s))).toBe(true);
});

test('identifiers are checked, never interpolated as given', () => {
  expect(() => serviceGrantStatements('db`; DROP', { user: 'u', host: '%' }, OWN_TABLE_GRANTS)).toThrow(/not a plain SQL identifier/);
  expect(() => serviceGrantStatements('timebucket', { user: "u'@'%", host: '%' }, OWN_TABLE_GRANTS)).toThrow(/account/);
});

test('TB_DB_SERVICE_USER: a name (host %) or name@host', () => {
  expect(loadConfig({}).migrate.serviceAccount).toBeUndefined();
  expect(loadConfig({ TB_DB_SERVICE_USER: 'app' }).migrate.serviceAccount).toEqual({ user: 'app', host: '%' });
  expect(loadConfig({ TB_DB_SERVICE_USER: 'app@10.0.%' }).migrate.serviceAccount).toEqual({ user: 'app', host: '10.0.%' });
  expect(() => loadConfig({ TB_DB_SERVICE_USER: "app'--" })).toThrow(/TB_DB_SERVICE_USER/);
});

test('revoked: what the ledger holds and the file no longer needs; on a mapped table the ledger has nothing of, the old whole-table SELECT', () => {
  const item = (table: string, privilege: string, column = '') => ({ table, privilege, column });
  const wanted = [item('coupons', 'SELECT', 'id'), item('coupons', 'UPDATE', 'status'), item('event_outbox', 'SELECT')];
  const recorded = [
    item('coupons', 'SELECT', 'id'),
    item('coupons', 'UPDATE', 'status'),
    item('coupons', 'UPDATE', 'expired_at'),
    item('wallets', 'SELECT', 'id'),
    item('event_outbox', 'SELECT'),
  ];
  expect(revokePlan(recorded, wanted, ['coupons', 'orders'])).toEqual({
    tableWide: [item('orders', 'SELECT')],
    columns: [item('coupons', 'UPDATE', 'expired_at'), item('wallets', 'SELECT', 'id')],
  });
  expect(revokePlan(wanted, wanted, ['coupons'])).toEqual({ tableWide: [], columns: [] });
  expect(revokeStatement('shop', { user: 'app', host: '%' }, item('wallets', 'SELECT', 'id'))).toBe("REVOKE SELECT (`id`) ON `shop`.`wallets` FROM 'app'@'%'");
  expect(revokeStatement('shop', { user: 'app', host: '%' }, item('orders', 'SELECT'))).toBe("REVOKE SELECT ON `shop`.`orders` FROM 'app'@'%'");
});

test('the ledger items of the grants: table-wide privileges and each column’s', () => {
  expect(grantItems([{ table: 't', privileges: ['INSERT'], selectColumns: ['id'], updateColumns: ['status'] }])).toEqual([
    { table: 't', privilege: 'INSERT', column: '' },
    { table: 't', privilege: 'SELECT', column: 'id' },
    { table: 't', privilege: 'UPDATE', column: 'status' },
  ]);
});
