import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ColumnInfo, SchemaInfo } from '../../../src/core/column-info';
import { parseEntityFile } from '../../../src/core/entity-file';
import { mappedTableGrants, OWN_TABLE_GRANTS, serviceGrantStatements } from '../../../src/db/service-grants';
import { loadConfig } from '../../../src/config';

const catalogue = parseEntityFile(readFileSync(join(__dirname, '../../../entities/default.json'), 'utf8'), 'entities/default.json');
const column = (name: string, autoUpdated = false): ColumnInfo => ({ name, dataType: 'datetime', columnType: 'datetime(3)', nullable: false, maxChars: null, charset: null, autoUpdated });
// What information_schema says of the demo tables, as far as the grants care: updated_at is ON UPDATE.
const schema: SchemaInfo = new Map(
  ['coupons', 'orders'].map((t) => [`main.${t}`, { name: t, columns: new Map([['updated_at', column('updated_at', true)], ['created_at', column('created_at')]]), indexes: [] }]),
);

test('grants read the mapped tables and update only the columns a transition or an effect changes', () => {
  const statements = serviceGrantStatements('timebucket', { user: 'timebucket_app', host: '%' }, [...mappedTableGrants(catalogue, schema), ...OWN_TABLE_GRANTS]);
  // The coupon: its own expiry (status, expired_at, version) and the order's release (locked_order_id).
  expect(statements[0]).toBe(
    "GRANT SELECT, UPDATE (`status`, `expired_at`, `version`, `locked_order_id`, `updated_at`) ON `timebucket`.`coupons` TO 'timebucket_app'@'%'",
  );
  expect(statements[1]).toBe(
    "GRANT SELECT, UPDATE (`status`, `cancel_time`, `cancel_reason`, `version`, `updated_at`) ON `timebucket`.`orders` TO 'timebucket_app'@'%'",
  );
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
