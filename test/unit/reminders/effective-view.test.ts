/** The effective view's text (db/sql/effective-view.ts); the real server runs it in test/integration/db/effective-view.test.ts. */
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { EFFECTIVE_VIEW_PREAMBLE, effectiveViewSql } from '../../../src/db/sql/effective-view';
import { loadEntities } from '../../../src/ops/load-entities';

/** Entity `wallet` on table user_coupon (status column `state`) with `transitions`. */
function walletOf(transitions: readonly object[], source: string) {
  const catalogue = parseEntityFile(
    { entities: [{ name: 'wallet', table: 'user_coupon', id: 'id', status: { column: 'state', type: 'string' }, transitions }] },
    source,
  );
  return entityOf(catalogue, 'wallet');
}

test('a DATETIME due column compares with UTC_TIMESTAMP(3), for the from-states only', () => {
  const coupon = entityOf(loadEntities('entities/default.json'), 'coupon');
  expect(effectiveViewSql(coupon, coupon.locations[0]!, new Map([['expired', 'datetime']]))).toBe(
    [
      "-- coupon on main.coupons: the status a reader should see, exact whatever the stream's lag",
      'CREATE OR REPLACE SQL SECURITY INVOKER VIEW `coupons_effective` AS',
      'SELECT t.`id`, t.`status`, t.`expire_time`,',
      '  CASE',
      // 'ACTIVE' and 'EXPIRED' as their UTF-8 bytes: no quoted text for a client to misread.
      "    WHEN t.`status` IN (_utf8mb4 X'414354495645') AND t.`expire_time` IS NOT NULL AND t.`expire_time` <= UTC_TIMESTAMP(3) THEN _utf8mb4 X'45585049524544'",
      '    ELSE t.`status`',
      '  END AS effective_status',
      'FROM `coupons` t;',
    ].join('\n'),
  );
});

test('two transitions: the earlier due wins, ties in file order; epoch and TIMESTAMP columns use their clocks; values are hex literals', () => {
  const wallet = walletOf(
    [
      {
        name: 'expired',
        from: ["o'k", 'locked'],
        to: 'gone',
        due: { column: 'expire_ms', kind: 'epoch_ms' },
        index: 'i1',
        event: { type: 'A', ceType: 'a', avroName: 'x.A', idField: 'id_a', summary: 's' },
      },
      {
        name: 'unlocked',
        from: ['locked'],
        to: "o'k",
        due: { column: 'lock_until', kind: 'datetime' },
        index: 'i2',
        event: { type: 'B', ceType: 'b', avroName: 'x.B', idField: 'id_b', summary: 's' },
      },
    ],
    'two.json',
  );
  const sql = effectiveViewSql(wallet, wallet.locations[0]!, new Map([['unlocked', 'timestamp']]));
  expect(sql).toContain(
    "WHEN t.`state` IN (_utf8mb4 X'6F276B', _utf8mb4 X'6C6F636B6564') AND t.`expire_ms` IS NOT NULL AND t.`expire_ms` <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND NOT (t.`state` IN (_utf8mb4 X'6C6F636B6564') AND t.`lock_until` IS NOT NULL AND ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000) <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000) < t.`expire_ms`) THEN _utf8mb4 X'676F6E65'",
  );
  expect(sql).toContain(
    "WHEN t.`state` IN (_utf8mb4 X'6C6F636B6564') AND t.`lock_until` IS NOT NULL AND ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000) <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND NOT (t.`state` IN (_utf8mb4 X'6F276B', _utf8mb4 X'6C6F636B6564') AND t.`expire_ms` IS NOT NULL AND t.`expire_ms` <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND t.`expire_ms` <= ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000)) THEN _utf8mb4 X'6F276B'",
  );
});

test('the view shows the id, the status and each due column once, and no value as quoted text', () => {
  const wallet = walletOf(
    [
      {
        name: 'expired',
        from: ["it's", 'a\\b'],
        to: '待\\',
        due: { column: 'expire_ms', kind: 'epoch_ms' },
        index: 'i1',
        event: { type: 'A', ceType: 'a', avroName: 'x.A', idField: 'id_a', summary: 's' },
      },
      {
        name: 'lapsed',
        from: ['x'],
        to: 'y',
        due: { column: 'expire_ms', kind: 'epoch_ms' },
        index: 'i1',
        event: { type: 'B', ceType: 'b', avroName: 'x.B', idField: 'id_b', summary: 's' },
      },
    ],
    'quotes.json',
  );
  const sql = effectiveViewSql(wallet, wallet.locations[0]!, new Map());
  expect(sql).toContain('SELECT t.`id`, t.`state`, t.`expire_ms`,\n');
  expect(sql).toContain(`IN (_utf8mb4 X'${Buffer.from("it's").toString('hex').toUpperCase()}', _utf8mb4 X'615C62')`);
  expect(sql).toContain("THEN _utf8mb4 X'E5BE855C'");
  // Below the comment line, nothing a client could read as the start or end of a string but the
  // fixed epoch constant, and no byte outside printable ASCII.
  const body = sql.split('\n').slice(1).join('\n');
  expect(body.replace(/'1970-01-01 00:00:00'/g, '').replace(/X'[0-9A-F]*'/g, '')).not.toMatch(/['"\\]/);
  expect(body).toMatch(/^[\x20-\x7e\n]*$/);
  expect(EFFECTIVE_VIEW_PREAMBLE).toBe('SET NAMES utf8mb4;');
});
