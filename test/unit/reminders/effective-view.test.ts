/** The effective view's text (db/effective-view.ts); the real server runs it in test/integration/db/effective-view.test.ts. */
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { effectiveViewSql } from '../../../src/db/effective-view';
import { loadEntities } from '../../../src/ops/load-entities';

test('a DATETIME due column compares with UTC_TIMESTAMP(3), for the from-states only', () => {
  const coupon = entityOf(loadEntities('entities/default.json'), 'coupon');
  expect(effectiveViewSql(coupon, coupon.locations[0]!, new Map([['expired', 'datetime']]))).toBe(
    [
      '-- coupon on main.coupons: the status a reader should see, exact whatever the stream\'s lag',
      'CREATE OR REPLACE VIEW `coupons_effective` AS',
      'SELECT t.*,',
      '  CASE',
      "    WHEN t.`status` IN ('ACTIVE') AND t.`expire_time` IS NOT NULL AND t.`expire_time` <= UTC_TIMESTAMP(3) THEN 'EXPIRED'",
      '    ELSE t.`status`',
      '  END AS effective_status',
      'FROM `coupons` t;',
    ].join('\n'),
  );
});

test('two transitions: the earlier due wins, ties in file order; epoch and TIMESTAMP columns use their clocks; quotes are escaped', () => {
  const catalogue = parseEntityFile(
    {
      entities: [
        {
          name: 'wallet',
          table: 'user_coupon',
          id: 'id',
          status: { column: 'state', type: 'string' },
          transitions: [
            { name: 'expired', from: ["o'k", 'locked'], to: 'gone', due: { column: 'expire_ms', kind: 'epoch_ms' }, index: 'i1', event: { type: 'A', ceType: 'a', avroName: 'x.A', idField: 'id_a', summary: 's' } },
            { name: 'unlocked', from: ['locked'], to: "o'k", due: { column: 'lock_until', kind: 'datetime' }, index: 'i2', event: { type: 'B', ceType: 'b', avroName: 'x.B', idField: 'id_b', summary: 's' } },
          ],
        },
      ],
    },
    'two.json',
  );
  const sql = effectiveViewSql(entityOf(catalogue, 'wallet'), entityOf(catalogue, 'wallet').locations[0]!, new Map([['unlocked', 'timestamp']]));
  expect(sql).toContain("WHEN t.`state` IN ('o''k', 'locked') AND t.`expire_ms` IS NOT NULL AND t.`expire_ms` <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND NOT (t.`state` IN ('locked') AND t.`lock_until` IS NOT NULL AND ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000) <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000) < t.`expire_ms`) THEN 'gone'");
  expect(sql).toContain("WHEN t.`state` IN ('locked') AND t.`lock_until` IS NOT NULL AND ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000) <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND NOT (t.`state` IN ('o''k', 'locked') AND t.`expire_ms` IS NOT NULL AND t.`expire_ms` <= TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AND t.`expire_ms` <= ROUND(UNIX_TIMESTAMP(t.`lock_until`) * 1000)) THEN 'o''k'");
});
