/**
 * The server settings timebucket's correctness rests on. Inputs: none. Output: the server's
 * version and flavour, and its binlog settings. Safe to re-run: reads of system variables that
 * MySQL 8 and MariaDB both have under these names.
 *   log_bin          Debezium reads the binlog: it must be on
 *   binlog_format    ROW: Debezium needs row images (a fresh MariaDB says MIXED)
 *   binlog_row_image FULL: the before image proves a change did not move a due time
 *                    (core/bucket-entry.ts); with MINIMAL every update would schedule again
 */
import type { Knex } from 'knex';
import { serverFlavour } from './server-flavour';
import type { ServerFlavour } from '../core/column-info';

export type ServerSettings = Readonly<{ flavour: ServerFlavour; version: string; logBin: boolean; binlogFormat: string; binlogRowImage: string }>;

export async function readServerSettings(db: Knex): Promise<ServerSettings> {
  const { flavour, version } = await serverFlavour(db);
  const [[row]] = (await db.raw('SELECT @@GLOBAL.log_bin AS log_bin, @@GLOBAL.binlog_format AS fmt, @@GLOBAL.binlog_row_image AS img')) as [
    [{ log_bin: number | string; fmt: string; img: string }],
  ];
  return { flavour, version, logBin: Number(row.log_bin) === 1 || String(row.log_bin).toUpperCase() === 'ON', binlogFormat: String(row.fmt).toUpperCase(), binlogRowImage: String(row.img).toUpperCase() };
}

/** Each setting that is wrong, with its fix. */
export function serverSettingProblems(s: ServerSettings): string[] {
  const problems: string[] = [];
  const cnf = s.flavour === 'mariadb' ? 'my.cnf [mariadb]' : 'my.cnf [mysqld]';
  if (!s.logBin) problems.push(`the binlog is off: Debezium cannot capture changes; set log_bin in ${cnf} and restart`);
  if (s.binlogFormat !== 'ROW') problems.push(`binlog_format is ${s.binlogFormat}: Debezium needs ROW; SET GLOBAL binlog_format = 'ROW' and binlog_format=ROW in ${cnf}`);
  if (s.binlogRowImage !== 'FULL') problems.push(`binlog_row_image is ${s.binlogRowImage}: FULL is needed (the before image tells an unchanged due time); SET GLOBAL binlog_row_image = 'FULL' and in ${cnf}`);
  return problems;
}
