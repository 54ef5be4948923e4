/**
 * A database's signals for its pacer (core/pacer.ts), read from the server itself: Threads_running
 * and InnoDB's history list length, two cheap reads (db/sql/read-threads-running.ts,
 * read-history-list-length.ts) about once a second, on the service's own pool and under its
 * statement deadline (db/statement-deadline.ts). The caller keeps one read in flight per database
 * and treats a slow one as no signal (hold/database-pacing.ts).
 *
 * The flavour is read once per database (the history list has no common source), and a MySQL
 * account without PROCESS is told once: the pacer goes on without that signal.
 */
import type { Knex } from 'knex';
import type { ServerSignals } from '../core/pacer';
import type { ServerFlavour } from '../core/column-info';
import type { Logger } from '../ops/logger';
import { serverFlavour } from './sql/server-flavour';
import { readThreadsRunning } from './sql/read-threads-running';
import { readHistoryListLength } from './sql/read-history-list-length';

export function pacerSignalReader(dbs: Readonly<Record<string, Knex>>, logger: Logger): (database: string) => Promise<ServerSignals> {
  const flavours = new Map<string, ServerFlavour>();
  const told = new Set<string>();
  return async (database) => {
    const db = dbs[database];
    if (db === undefined) return {};
    let flavour = flavours.get(database);
    if (flavour === undefined) flavours.set(database, (flavour = (await serverFlavour(db)).flavour));
    const threadsRunning = await readThreadsRunning(db);
    const historyListLength = await readHistoryListLength(db, flavour);
    if (historyListLength === undefined && !told.has(database)) {
      told.add(database);
      logger.warn({ database }, "pacing cannot read InnoDB's history list length (MySQL: the account lacks PROCESS); paced without that signal");
    }
    return { threadsRunning, ...(historyListLength !== undefined && { historyListLength }) };
  };
}
