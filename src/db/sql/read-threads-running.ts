/**
 * The server's Threads_running: statements executing now, the application's and ours (pacing's
 * overload signal, core/pacer.ts; gh-ost's --max-load, pt-online-schema-change's check).
 * Inputs: none. Output: the count. Safe to re-run: a read of one status variable, which needs
 * no privilege on MariaDB or MySQL.
 */
import type { Knex } from 'knex';

export async function readThreadsRunning(db: Pick<Knex, 'raw'>): Promise<number> {
  const [rows] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Threads_running'")) as [Array<{ Value: string | number }>];
  return Number(rows[0]?.Value);
}
