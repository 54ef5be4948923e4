import { serverSettingProblems } from '../../../src/db/read-server-settings';

test('the binlog on, in ROW format with FULL row images, is what Debezium and the decoder need', () => {
  expect(serverSettingProblems({ flavour: 'mariadb', version: '10.11', logBin: true, binlogFormat: 'ROW', binlogRowImage: 'FULL' })).toEqual([]);
  const problems = serverSettingProblems({ flavour: 'mysql', version: '8.0.36', logBin: false, binlogFormat: 'MIXED', binlogRowImage: 'MINIMAL' });
  expect(problems).toHaveLength(3);
  expect(problems[0]).toMatch(/^the binlog is off.*\[mysqld\]/);
  expect(problems[1]).toMatch(/^binlog_format is MIXED: Debezium needs ROW/);
  expect(problems[2]).toMatch(/^binlog_row_image is MINIMAL/);
});
