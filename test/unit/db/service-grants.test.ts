import { serviceGrantStatements } from '../../../src/db/service-grants';
import { loadConfig } from '../../../src/config';

test('grants read the business tables and update only the columns a transition changes', () => {
  const statements = serviceGrantStatements('timebucket', { user: 'timebucket_app', host: '%' });
  expect(statements[0]).toBe(
    "GRANT SELECT, UPDATE (`status`, `expired_at`, `locked_order_id`, `version`, `updated_at`) ON `timebucket`.`coupons` TO 'timebucket_app'@'%'",
  );
  expect(statements.join('\n')).not.toMatch(/ALL PRIVILEGES|DROP|ALTER|CREATE|GRANT OPTION|\*\.\*/);
  expect(statements.filter((s) => /`(coupons|orders)`/.test(s)).every((s) => !/DELETE|INSERT/.test(s))).toBe(true);
});

test('identifiers are checked, never interpolated as given', () => {
  expect(() => serviceGrantStatements('db`; DROP', { user: 'u', host: '%' })).toThrow(/database name/);
  expect(() => serviceGrantStatements('timebucket', { user: "u'@'%", host: '%' })).toThrow(/account/);
});

test('TB_DB_SERVICE_USER: a name (host %) or name@host', () => {
  expect(loadConfig({}).migrate.serviceAccount).toBeUndefined();
  expect(loadConfig({ TB_DB_SERVICE_USER: 'app' }).migrate.serviceAccount).toEqual({ user: 'app', host: '%' });
  expect(loadConfig({ TB_DB_SERVICE_USER: 'app@10.0.%' }).migrate.serviceAccount).toEqual({ user: 'app', host: '10.0.%' });
  expect(() => loadConfig({ TB_DB_SERVICE_USER: "app'--" })).toThrow(/TB_DB_SERVICE_USER/);
});
