/**
 * The server settings timebucket's correctness rests on. Inputs: none. Output: the server's
 * version and flavour, and its binlog settings. Safe to re-run: reads of system variables.
 *   log_bin          Debezium reads the binlog: it must be on
 *   binlog_format    ROW: Debezium needs row images (a fresh MariaDB says MIXED)
 *   binlog_row_image FULL: the before image proves a change did not move a due time
 *                    (core/bucket-entry.ts); with MINIMAL every update would schedule again
 *   binlog_expire_logs_seconds
 *                    how long the binlog keeps what Connect has not read: an outage of Connect
 *                    longer than this loses changes and events (docs/operations.md, "Binlog
 *                    retention"); 0 keeps it for good. MariaDB 10.6+ names expire_logs_days so too.
 *   gtid_mode        MySQL only (MariaDB's GTIDs are always on): ON or OFF. The transitional
 *                    modes write transactions with and without GTIDs, and a connector resuming
 *                    by GTID set on a replica after a failover can skip or repeat them.
 *   enforce_gtid_consistency
 *                    MySQL only: ON refuses the statements a GTID cannot describe. MySQL allows
 *                    gtid_mode=ON only with it ON, but a server on its way there (a transitional
 *                    gtid_mode) may run it at WARN or OFF, and that server's GTIDs do not cover
 *                    every transaction the connector resumes from.
 */
import type { Knex } from 'knex';
import { serverFlavour } from './server-flavour';
import type { ServerFlavour } from '../../core/column-info';

export type ServerSettings = Readonly<{
  flavour: ServerFlavour;
  version: string;
  logBin: boolean;
  binlogFormat: string;
  binlogRowImage: string;
  /** 0: never purged. */
  binlogRetentionSeconds: number;
  /** MySQL's gtid_mode (ON, OFF, ON_PERMISSIVE, OFF_PERMISSIVE); undefined on MariaDB. */
  gtidMode?: string;
  /** MySQL's enforce_gtid_consistency (ON, WARN, OFF); undefined on MariaDB. */
  enforceGtidConsistency?: string;
}>;

/** The Connect outage the binlog must outlast, as docs/operations.md states it: a day. */
export const CONNECT_OUTAGE_BUDGET_SECONDS = 86_400;

export async function readServerSettings(db: Knex): Promise<ServerSettings> {
  const { flavour, version } = await serverFlavour(db);
  const gtid = flavour === 'mysql' ? ', @@GLOBAL.gtid_mode AS gtid, @@GLOBAL.enforce_gtid_consistency AS enforce' : '';
  const [[row]] = (await db.raw(
    `SELECT @@GLOBAL.log_bin AS log_bin, @@GLOBAL.binlog_format AS fmt, @@GLOBAL.binlog_row_image AS img, @@GLOBAL.binlog_expire_logs_seconds AS keep${gtid}`,
  )) as [[{ log_bin: number | string; fmt: string; img: string; keep: number | string; gtid?: string; enforce?: string | number }]];
  return {
    flavour,
    version,
    logBin: Number(row.log_bin) === 1 || String(row.log_bin).toUpperCase() === 'ON',
    binlogFormat: String(row.fmt).toUpperCase(),
    binlogRowImage: String(row.img).toUpperCase(),
    binlogRetentionSeconds: Number(row.keep),
    ...(row.gtid !== undefined && { gtidMode: String(row.gtid).toUpperCase() }),
    ...(row.enforce !== undefined && { enforceGtidConsistency: enforceText(row.enforce) }),
  };
}

/** The variable reads as text (ON, WARN, OFF), or as its ordinal through some drivers and proxies. */
function enforceText(v: string | number): string {
  return typeof v === 'number' ? (['OFF', 'ON', 'WARN'][v] ?? String(v)) : v.toUpperCase();
}

/** Each setting that is wrong, with its fix. */
export function serverSettingProblems(s: ServerSettings): string[] {
  const problems: string[] = [];
  const cnf = s.flavour === 'mariadb' ? 'my.cnf [mariadb]' : 'my.cnf [mysqld]';
  if (!s.logBin) problems.push(`the binlog is off: Debezium cannot capture changes; set log_bin in ${cnf} and restart`);
  if (s.binlogFormat !== 'ROW')
    problems.push(`binlog_format is ${s.binlogFormat}: Debezium needs ROW; SET GLOBAL binlog_format = 'ROW' and binlog_format=ROW in ${cnf}`);
  if (s.binlogRowImage !== 'FULL')
    problems.push(
      `binlog_row_image is ${s.binlogRowImage}: FULL is needed (the before image tells an unchanged due time); SET GLOBAL binlog_row_image = 'FULL' and in ${cnf}`,
    );
  if (s.binlogRetentionSeconds > 0 && s.binlogRetentionSeconds < CONNECT_OUTAGE_BUDGET_SECONDS) {
    problems.push(
      `binlog_expire_logs_seconds is ${s.binlogRetentionSeconds}: a Connect outage longer than that loses changes and events, and the outage budget is ${CONNECT_OUTAGE_BUDGET_SECONDS} s (docs/operations.md); SET GLOBAL binlog_expire_logs_seconds = ${2 * CONNECT_OUTAGE_BUDGET_SECONDS} and in ${cnf}`,
    );
  }
  if (s.gtidMode !== undefined && s.gtidMode !== 'ON' && s.gtidMode !== 'OFF') {
    problems.push(
      `gtid_mode is ${s.gtidMode}: transactions with and without GTIDs mix, and a connector resuming by GTID set after a failover can skip some; finish the change to gtid_mode=ON (with enforce_gtid_consistency=ON) in ${cnf}`,
    );
  }
  if (s.gtidMode !== undefined && s.gtidMode !== 'OFF' && s.enforceGtidConsistency !== undefined && s.enforceGtidConsistency !== 'ON') {
    problems.push(
      `enforce_gtid_consistency is ${s.enforceGtidConsistency} with gtid_mode ${s.gtidMode}: statements a GTID cannot describe are let through; SET GLOBAL enforce_gtid_consistency = ON and in ${cnf}`,
    );
  }
  return problems;
}
