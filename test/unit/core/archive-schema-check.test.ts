/**
 * An entity's archive against the database (core/archive-schema-check.ts, through
 * entitySchemaProblems): the wallet of examples/shop/entities-split.json (a table set over two
 * databases, Chinese states) archiving its expired and used coupons by their due time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ColumnInfo, TableInfo } from '../../../src/core/column-info';
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { entitySchemaProblems } from '../../../src/core/entity-schema-check';

const text = readFileSync(join(__dirname, '../../../examples/shop/entities-split.json'), 'utf8');
const file = JSON.parse(text) as { entities: Array<Record<string, unknown>> };
file.entities = [
  {
    ...file.entities[1]!,
    archive: { finalStates: ['已过期', '已使用'], since: { column: 'expire_at_ms', kind: 'epoch_ms' }, table: '{table}_archive', index: 'idx_status_expire' },
  },
];
const catalogue = parseEntityFile(file, 'split.json');
const wallet = entityOf(catalogue, 'user_coupon');
const names = { main: 'shop', shop_b: 'shop2' };

const column = (name: string, columnType: string, nullable = false, extra: Partial<ColumnInfo> = {}): ColumnInfo => ({
  name,
  dataType: columnType.replace(/\(.*$/, '').split(' ')[0]!,
  columnType,
  nullable,
  maxChars: null,
  charset: null,
  ...extra,
});

const COLUMNS = [
  column('id', 'bigint unsigned'),
  column('user_id', 'bigint unsigned'),
  column('status', 'varchar(8)', false, { maxChars: 8, charset: 'utf8mb4' }),
  column('expire_at_ms', 'bigint'),
  column('lock_expire_time', 'datetime(3)', true),
  column('lock_order_no', 'varchar(64)', true),
  column('face_value', 'decimal(10,2)'),
];

function table(columns: readonly ColumnInfo[], indexes = [{ name: 'PRIMARY', columns: ['id'], unique: true }]): TableInfo {
  return { name: 't', columns: new Map(columns.map((c) => [c.name, c])), indexes };
}

const hot = table(
  COLUMNS.map((c) => (c.name === 'id' ? { ...c, autoIncrement: true } : c)),
  [
    { name: 'PRIMARY', columns: ['id'], unique: true },
    { name: 'idx_status_expire', columns: ['status', 'expire_at_ms', 'id'], unique: false },
    { name: 'idx_status_lock', columns: ['status', 'lock_expire_time', 'id'], unique: false },
  ],
);

/** Every hot table as `hot`, every archive table as `archive(location)` (absent when it returns undefined). */
function schema(archive: (key: string) => TableInfo | undefined, hotTable: TableInfo = hot): Map<string, TableInfo> {
  const m = new Map<string, TableInfo>(wallet.locations.map((l) => [l.key, hotTable]));
  for (const t of wallet.archive!.tables) {
    const a = archive(t.archive.key);
    if (a !== undefined) m.set(t.archive.key, a);
  }
  return m;
}

test('archive tables with every hot column as it is, the id their primary key without AUTO_INCREMENT: no problem', () => {
  expect(
    entitySchemaProblems(
      catalogue,
      schema(() => table([...COLUMNS, column('archived_at', 'datetime(3)', true)])),
      names,
    ),
  ).toEqual([]);
});

test('a missing archive table is named with what migrate creates', () => {
  const problems = entitySchemaProblems(
    catalogue,
    schema((key) => (key === 'shop_b.user_coupon_3_archive' ? undefined : table(COLUMNS))),
    names,
  );
  expect(problems).toEqual([
    'user_coupon archive (shop2.user_coupon_3): archive table shop2.user_coupon_3_archive does not exist; `timebucket migrate` creates it (CREATE TABLE shop2.user_coupon_3_archive LIKE shop2.user_coupon_3, without AUTO_INCREMENT)',
  ]);
});

test('an archive that cannot take the rows as they are: a narrower column, a missing one, a NOT NULL one of its own, another key, AUTO_INCREMENT', () => {
  const bad = table(
    [
      ...COLUMNS.filter((c) => c.name !== 'lock_order_no').map((c) =>
        c.name === 'face_value' ? column('face_value', 'decimal(8,2)') : c.name === 'id' ? { ...c, autoIncrement: true } : c,
      ),
      column('note', 'varchar(10)'),
    ],
    [{ name: 'PRIMARY', columns: ['id', 'user_id'], unique: true }],
  );
  const problems = entitySchemaProblems(
    catalogue,
    schema((key) => (key === 'main.user_coupon_0_archive' ? bad : table(COLUMNS))),
    names,
  );
  expect(problems).toEqual([
    'user_coupon archive (shop.user_coupon_0_archive): column lock_order_no of shop.user_coupon_0 is missing (ALTER TABLE … ADD COLUMN lock_order_no varchar(64) NULL)',
    'user_coupon archive (shop.user_coupon_0_archive): column face_value is decimal(8,2) NOT NULL but decimal(10,2) NOT NULL in shop.user_coupon_0; the archive takes its rows as they are',
    'user_coupon archive (shop.user_coupon_0_archive): column note is not in shop.user_coupon_0 and NOT NULL; the copy would not fill it: make it NULL',
    'user_coupon archive (shop.user_coupon_0_archive): the primary key is (id, user_id); it must be the id id alone (the copy is idempotent on it)',
    "user_coupon archive (shop.user_coupon_0_archive): id column id is AUTO_INCREMENT; the archive takes the hot table's ids: ALTER TABLE … MODIFY id without it",
  ]);
});

test("the hot table's side: the mover's index and the since column's kind", () => {
  const noIndex = table(
    COLUMNS.map((c) => (c.name === 'expire_at_ms' ? column('expire_at_ms', 'datetime(3)') : c)),
    [{ name: 'PRIMARY', columns: ['id'], unique: true }],
  );
  const withoutIndex = entitySchemaProblems(
    catalogue,
    schema(() => noIndex, noIndex),
    names,
    'main',
  ).filter((p) => p.startsWith('user_coupon archive (shop.user_coupon_0)'));
  expect(withoutIndex).toEqual([
    'user_coupon archive (shop.user_coupon_0): since column expire_at_ms is datetime(3); kind epoch_ms needs BIGINT',
    "user_coupon archive (shop.user_coupon_0): index idx_status_expire does not exist; the archive's mover pages through (status, since, id): CREATE INDEX idx_status_expire ON shop.user_coupon_0 (status, expire_at_ms, id)",
  ]);
});
