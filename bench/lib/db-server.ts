/** Server-wide readings: the database clock and how many rows the storage engine has handed over. */
import type { Db } from '../../src/db/knex';

/** The database clock (NOW(3)) as epoch ms: it decides when a row is due. */
export async function dbNowMs(db: Db): Promise<number> {
  const [rows] = (await db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>];
  return rows[0]!.now.getTime();
}

/**
 * Rows the storage engine handed to the server so far: the sum of the Handler_read_* counters
 * (index lookups, next/prev in an index, full-scan reads). Server-wide: anything else running
 * on the server between two readings counts too.
 */
export async function rowsRead(db: Db): Promise<number> {
  return Object.values(await rowsReadByCounter(db)).reduce((a, b) => a + b, 0);
}

/** The Handler_read_* counters one by one: which kind of read (key lookup, index walk, table scan). */
export async function rowsReadByCounter(db: Db): Promise<Record<string, number>> {
  const [rows] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Handler_read%'")) as [Array<{ Variable_name: string; Value: string }>];
  if (rows.length === 0) throw new Error('SHOW GLOBAL STATUS returned no Handler_read_* counters');
  return Object.fromEntries(rows.map((r) => [r.Variable_name, Number(r.Value)]));
}

/** after − before, counter by counter. */
export function readsBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([name, n]) => [name, n - (before[name] ?? 0)]));
}

/**
 * Bytes the server has written to its binary log so far: what CDC must read and replicas apply.
 * Server-wide, like the read counters. MariaDB counts them (Binlog_bytes_written); MySQL does
 * not, and there the sizes of its binary log files add up to the same while none is purged
 * (a bench run is minutes; the stack keeps them two days).
 */
export async function binlogBytesWritten(db: Db): Promise<number> {
  const [rows] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Binlog_bytes_written'")) as [Array<{ Value: string }>];
  if (rows.length > 0) return Number(rows[0]!.Value);
  const [logs] = (await db.raw('SHOW BINARY LOGS')) as [Array<{ File_size: number | string }>];
  if (logs.length === 0) throw new Error('SHOW BINARY LOGS lists no file (binary log off?)');
  return logs.reduce((n, l) => n + Number(l.File_size), 0);
}
