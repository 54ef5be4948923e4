import { CONNECT_OUTAGE_BUDGET_SECONDS, serverSettingProblems } from '../../../src/db/sql/read-server-settings';

const good = { flavour: 'mariadb', version: '10.11', logBin: true, binlogFormat: 'ROW', binlogRowImage: 'FULL', binlogRetentionSeconds: 172_800 } as const;

test('the binlog on, in ROW format with FULL row images, is what Debezium and the decoder need', () => {
  expect(serverSettingProblems(good)).toEqual([]);
  const problems = serverSettingProblems({
    ...good,
    flavour: 'mysql',
    version: '9.7.4',
    logBin: false,
    binlogFormat: 'MIXED',
    binlogRowImage: 'MINIMAL',
    gtidMode: 'ON',
  });
  expect(problems).toHaveLength(3);
  expect(problems[0]).toMatch(/^the binlog is off.*\[mysqld\]/);
  expect(problems[1]).toMatch(/^binlog_format is MIXED: Debezium needs ROW/);
  expect(problems[2]).toMatch(/^binlog_row_image is MINIMAL/);
});

test('a binlog kept for less than the Connect outage budget is a problem; kept for good (0) or longer is not', () => {
  expect(serverSettingProblems({ ...good, binlogRetentionSeconds: 3_600 })).toEqual([
    expect.stringMatching(/^binlog_expire_logs_seconds is 3600: a Connect outage longer than that loses changes and events.*86400/),
  ]);
  expect(serverSettingProblems({ ...good, binlogRetentionSeconds: CONNECT_OUTAGE_BUDGET_SECONDS })).toEqual([]);
  expect(serverSettingProblems({ ...good, binlogRetentionSeconds: 0 })).toEqual([]);
});

test("MySQL's GTIDs on or off are fine; a transitional gtid_mode is named", () => {
  const mysql = { ...good, flavour: 'mysql' as const, version: '9.7.4' };
  expect(serverSettingProblems({ ...mysql, gtidMode: 'ON' })).toEqual([]);
  expect(serverSettingProblems({ ...mysql, gtidMode: 'OFF' })).toEqual([]);
  expect(serverSettingProblems({ ...mysql, gtidMode: 'ON_PERMISSIVE' })).toEqual([
    expect.stringMatching(/^gtid_mode is ON_PERMISSIVE: .*gtid_mode=ON.*\[mysqld\]$/),
  ]);
});

test('enforce_gtid_consistency must be ON once gtid_mode is anything but OFF; MariaDB has no such setting', () => {
  const mysql = { ...good, flavour: 'mysql' as const, version: '9.7.4' };
  expect(serverSettingProblems({ ...mysql, gtidMode: 'ON', enforceGtidConsistency: 'ON' })).toEqual([]);
  expect(serverSettingProblems({ ...mysql, gtidMode: 'OFF', enforceGtidConsistency: 'WARN' })).toEqual([]);
  expect(serverSettingProblems({ ...mysql, gtidMode: 'ON_PERMISSIVE', enforceGtidConsistency: 'WARN' })).toEqual([
    expect.stringMatching(/^gtid_mode is ON_PERMISSIVE/),
    expect.stringMatching(
      /^enforce_gtid_consistency is WARN with gtid_mode ON_PERMISSIVE: .*SET GLOBAL enforce_gtid_consistency = ON and in my\.cnf \[mysqld\]$/,
    ),
  ]);
  expect(serverSettingProblems(good)).toEqual([]);
});
