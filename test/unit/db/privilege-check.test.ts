import { missingPrivileges } from '../../../src/db/privilege-check';
import type { OwnPrivileges } from '../../../src/db/sql/read-own-privileges';

const needed = [
  { table: 'coupons', privileges: ['SELECT'], updateColumns: ['status', 'version'] },
  { table: 'event_outbox', privileges: ['SELECT', 'INSERT', 'DELETE'] },
];
const own = (o: Partial<{ global: string[]; schema: string[]; tables: Record<string, string[]>; columns: Record<string, string[]> }>): OwnPrivileges => ({
  global: new Set(o.global ?? ['USAGE']),
  schema: new Set(o.schema ?? []),
  tables: new Map(Object.entries(o.tables ?? {}).map(([k, v]) => [k, new Set(v)])),
  columns: new Map(Object.entries(o.columns ?? {}).map(([k, v]) => [k, new Set(v)])),
});

test('privileges held per table and column satisfy the needs; each lack is named', () => {
  const granted = own({
    tables: { coupons: ['SELECT'], event_outbox: ['SELECT', 'INSERT', 'DELETE'] },
    columns: { 'coupons.status': ['UPDATE'], 'coupons.version': ['UPDATE'] },
  });
  expect(missingPrivileges(needed, granted, 'shop')).toEqual([]);
  const partial = own({ tables: { coupons: ['SELECT'], event_outbox: ['SELECT'] }, columns: { 'coupons.status': ['UPDATE'] } });
  expect(missingPrivileges(needed, partial, 'shop')).toEqual(['UPDATE (version) on shop.coupons', 'INSERT, DELETE on shop.event_outbox']);
});

test('a privilege held on the whole database or globally counts for every table and column', () => {
  expect(missingPrivileges(needed, own({ schema: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] }), 'shop')).toEqual([]);
  expect(missingPrivileges(needed, own({ global: ['ALL PRIVILEGES'] }), 'shop')).toEqual([]);
  expect(missingPrivileges(needed, own({}), 'shop')).toEqual([
    'SELECT on shop.coupons',
    'UPDATE (status, version) on shop.coupons',
    'SELECT, INSERT, DELETE on shop.event_outbox',
  ]);
});

test('SELECT of columns: held on each column or on the whole table; each column lacking is named', () => {
  const columnsOnly = [{ table: 'coupons', privileges: [], selectColumns: ['id', 'status'], updateColumns: ['status'] }];
  expect(missingPrivileges(columnsOnly, own({ columns: { 'coupons.id': ['SELECT'], 'coupons.status': ['SELECT', 'UPDATE'] } }), 'shop')).toEqual([]);
  expect(missingPrivileges(columnsOnly, own({ tables: { coupons: ['SELECT'] }, columns: { 'coupons.status': ['UPDATE'] } }), 'shop')).toEqual([]);
  expect(missingPrivileges(columnsOnly, own({ columns: { 'coupons.id': ['SELECT'], 'coupons.status': ['UPDATE'] } }), 'shop')).toEqual([
    'SELECT (status) on shop.coupons',
  ]);
});
