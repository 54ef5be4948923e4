/** The scanner's page statement, generated per cursor (a transition and one of its from-values). */
import { scanPageSql } from '../../../src/reconcile/sql/claim-scan-page';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { defaults, tickets } from './catalogues';

test("coupons: today's statement, its identifiers quoted", () => {
  const [coupon] = scanCursorsOf(defaults);
  expect(scanPageSql(coupon!).replace(/\s+/g, ' ')).toBe(
    'SELECT `id`, `expire_time` FROM `coupons` FORCE INDEX (`idx_coupons_status_expire_id`)' +
      ' WHERE `status` = ? AND `expire_time` <= ? AND (`expire_time` > ? OR (`expire_time` = ? AND `id` > ?)) ORDER BY `status`, `expire_time`, `id` LIMIT ?',
  );
});

test('an integer status and an epoch-ms due column: the same shape on their own table, index and columns; the status value typed', () => {
  const cursors = scanCursorsOf(tickets);
  expect(cursors.map((c) => c.from)).toEqual([1, 2]); // bound as numbers, one index range each
  const sql = scanPageSql(cursors[1]!).replace(/\s+/g, ' ');
  expect(sql).toBe(
    'SELECT `ticket_id`, `deadline_ms` FROM `tickets` FORCE INDEX (`idx_tickets_state_deadline`)' +
      ' WHERE `state` = ? AND `deadline_ms` <= ? AND (`deadline_ms` > ? OR (`deadline_ms` = ? AND `ticket_id` > ?)) ORDER BY `state`, `deadline_ms`, `ticket_id` LIMIT ?',
  );
});
