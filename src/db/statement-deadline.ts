/**
 * A deadline on every statement of a pooled mysql2 connection. A database that stops answering
 * (a frozen process, a blackholed network) neither refuses nor closes: without a deadline a
 * statement on a pooled connection waits until TCP gives up, about 15 minutes on Linux
 * defaults, and whatever waits on it (an expiry slot, a breaker that never sees a failure)
 * waits as long.
 *
 * Past its deadline the statement's connection is destroyed with a retriable
 * TimebucketError('STATEMENT_DEADLINE'): mysql2 hands that error to the statement and to every
 * command queued behind it (its fatal-error path, as for a lost connection), and knex's pool
 * discards the connection when it comes back (validateConnection sees a fatal error). A
 * statement cannot be abandoned and its connection kept: the server may still be running it,
 * and the next statement would queue behind it.
 *
 * mysql2's own `timeout` query option does not do this: it fails the callback and leaves the
 * connection as it was, still waiting for the old statement's answer.
 *
 * The deadline is the pool's (db/knex.ts): the connection's `statementTimeoutMs`, migrate's own.
 */
import { TimebucketError } from '../core/errors';

type Callback = (...results: unknown[]) => void;
export type DeadlineConnection = {
  query: (...args: unknown[]) => unknown;
  execute: (...args: unknown[]) => unknown;
  stream: { destroy: (err?: Error) => void };
  threadId?: number | null;
};

/** The start of the statement, for the error: which statement hung says which stage waited. */
function sqlOf(first: unknown): string {
  const sql = typeof first === 'string' ? first : (first as { sql?: unknown } | null)?.sql;
  return typeof sql === 'string' ? sql.replace(/\s+/g, ' ').slice(0, 120) : '';
}

/** Wraps `conn.query` and `conn.execute` so that each call with a callback has the deadline `ms` (0: none). */
export function armStatementDeadlines(conn: DeadlineConnection, ms: number): void {
  if (ms <= 0) return;
  for (const method of ['query', 'execute'] as const) {
    const original = conn[method].bind(conn);
    conn[method] = (...args: unknown[]) => {
      let at = args.length - 1;
      while (at >= 0 && typeof args[at] !== 'function') at -= 1;
      if (at < 0) return original(...args);
      const callback = args[at] as Callback;
      const timer = setTimeout(() => {
        const err = new TimebucketError(
          'STATEMENT_DEADLINE',
          `statement still unanswered after its ${ms} ms deadline; its connection is closed (the database is not answering)`,
          {
            retriable: true,
            details: { deadlineMs: ms, threadId: conn.threadId ?? null, sql: sqlOf(args[0]) },
          },
        );
        conn.stream.destroy(err);
      }, ms);
      args[at] = (...results: unknown[]) => {
        clearTimeout(timer);
        callback(...results);
      };
      return original(...args);
    };
  }
}
