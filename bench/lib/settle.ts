/**
 * Before each run, a wait for what the previous run may have left behind: InnoDB purging the
 * undo of a million updated rows, the brokers' and Connect's collections, a dropped database's
 * files. Each contender then starts from the same state, whatever ran before it. (It does not
 * explain every spread between runs: in the reference run of fe8952c every run found the machine
 * quiet within 2 s, and the stream's steady P99 has read 94, 111 and 318 ms in runs of the same
 * code.)
 *
 * Quiet means all three, read every 2 s: the machine at least `idleShare` idle over the last 2 s,
 * InnoDB's history list (undo not yet purged) at most `historyMax` entries, where the server
 * reports it to the bench's account (innodbHistoryLength), and at most `dirtyMax` of the buffer
 * pool's pages dirty: the last run's updated pages still to be written are the server's work
 * during the next run (MySQL's CPU per transition read 68 to 117 µs between raw runs of the
 * same code, with the machine idle and the history purged before each).
 * Bounded by `maxS`: a machine that never gets quiet is noted in the run, not waited on for ever.
 */
import type { Db } from '../../src/db/knex';
import { machineCpuSeconds } from './proc';
import { sleep } from './log';

export type Settled = Readonly<{ waitedS: number; quiet: boolean; idleShare: number | null; historyLength: number | null; dirtyShare: number | null }>;

export type SettleOptions = Readonly<{ maxS: number; idleShare?: number; historyMax?: number; dirtyMax?: number; windowMs?: number }>;

export async function settle(db: Db, opts: SettleOptions): Promise<Settled> {
  const idleWanted = opts.idleShare ?? 0.8;
  const historyMax = opts.historyMax ?? 1_000;
  const dirtyMax = opts.dirtyMax ?? 0.01;
  const windowMs = opts.windowMs ?? 2_000;
  const started = Date.now();
  for (;;) {
    const before = machineCpuSeconds();
    await sleep(windowMs);
    const after = machineCpuSeconds();
    const idleShare = before && after ? share(after.idle - before.idle, after.busy - before.busy) : null;
    const historyLength = await innodbHistoryLength(db);
    const dirtyShare = await bufferPoolDirtyShare(db);
    const quiet =
      (idleShare === null || idleShare >= idleWanted) &&
      (historyLength === null || historyLength <= historyMax) &&
      (dirtyShare === null || dirtyShare <= dirtyMax);
    const waitedS = Math.round((Date.now() - started) / 100) / 10;
    if (quiet || waitedS >= opts.maxS) return { waitedS, quiet, idleShare, historyLength, dirtyShare };
  }
}

const share = (idle: number, busy: number): number | null => (idle + busy > 0 ? Math.round((idle / (idle + busy)) * 100) / 100 : null);

/** The share of the buffer pool's pages that are dirty (both servers, any account), or null. */
async function bufferPoolDirtyShare(db: Db): Promise<number | null> {
  try {
    const [rows] = (await db.raw("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_dirty', 'Innodb_buffer_pool_pages_total')")) as [
      Array<{ Variable_name: string; Value: string }>,
    ];
    const value = (name: string) => Number(rows.find((r) => r.Variable_name.toLowerCase() === name)?.Value);
    const dirty = value('innodb_buffer_pool_pages_dirty');
    const total = value('innodb_buffer_pool_pages_total');
    return Number.isFinite(dirty) && total > 0 ? Math.round((dirty / total) * 1000) / 1000 : null;
  } catch {
    return null;
  }
}

/**
 * Undo records not yet purged, or null where the server does not say. MariaDB has it as a
 * status variable, readable by any account; MySQL 8 only in INNODB_METRICS (enabled by
 * default, STATUS there, ENABLED in MariaDB's), which needs the PROCESS privilege.
 */
async function innodbHistoryLength(db: Db): Promise<number | null> {
  try {
    const [status] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")) as [Array<{ Value: string }>];
    if (status[0] !== undefined) return Number(status[0].Value);
    const [rows] = (await db.raw("SELECT * FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'")) as [Array<Record<string, unknown>>];
    const row = rows[0];
    const enabled = row !== undefined && (String(row['STATUS']).toLowerCase() === 'enabled' || Number(row['ENABLED']) === 1);
    return enabled ? Number(row['COUNT']) : null;
  } catch {
    return null;
  }
}
