/**
 * InnoDB's history list length: undo logs of committed transactions not yet purged (pacing's
 * purge-lag signal, core/pacer.ts). Bulk updates add to it; while purge lags, reads walk longer
 * version chains. Inputs: the server's flavour. Output: the length, or undefined when the account
 * may not read it. Safe to re-run: one read.
 *   MariaDB  the status variable Innodb_history_list_length: no privilege needed
 *   MySQL    information_schema.INNODB_METRICS, trx_rseg_history_len (a counter on by default):
 *            needs the global PROCESS privilege (1227 without it: undefined, and the pacer goes
 *            without this signal; docs/operations.md, "Pacing", says how to grant it)
 */
import type { Knex } from 'knex';
import type { ServerFlavour } from '../../core/column-info';

const ACCESS_DENIED = 1227;

export async function readHistoryListLength(db: Pick<Knex, 'raw'>, flavour: ServerFlavour): Promise<number | undefined> {
  if (flavour === 'mariadb') {
    const [rows] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")) as [Array<{ Value: string | number }>];
    return rows[0] === undefined ? undefined : Number(rows[0].Value);
  }
  try {
    const [rows] = (await db.raw("SELECT `COUNT` AS n FROM information_schema.INNODB_METRICS WHERE `NAME` = 'trx_rseg_history_len'")) as [
      Array<{ n: string | number }>,
    ];
    return rows[0] === undefined ? undefined : Number(rows[0].n);
  } catch (err) {
    if ((err as { errno?: unknown } | null)?.errno === ACCESS_DENIED) return undefined;
    throw err;
  }
}
