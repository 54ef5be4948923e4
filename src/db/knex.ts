/**
 * The knex instance for MySQL/MariaDB through mysql2.
 *
 * Time: every DATETIME is UTC. mysql2 would otherwise read and write DATETIME in the Node
 * process's local zone (`timezone: 'Z'` fixes the driver side), and NOW(3) follows the
 * session zone (`time_zone = '+00:00'` fixes the server side). Both are needed: the database
 * clock decides when a row is due (invariant I2), so its idea of "now" must be the same instant
 * the application wrote.
 *
 * BIGINT: ids are BIGINT UNSIGNED and snowflake-style ids pass 2^53. `supportBigNumbers` makes
 * mysql2 return a BIGINT beyond 2^53 as its exact decimal string instead of a rounded number
 * (safe ones stay numbers, so readers that count rows are unaffected); `bigintString` turns
 * either form into the decimal string the expirer and the scanner work with. Parameters go the
 * other way as decimal strings, which MariaDB compares with BIGINT columns exactly.
 *
 * Isolation: READ COMMITTED for every session of timebucket. Its transactions are guarded
 * updates that re-check state under row locks, so they need no snapshot; what REPEATABLE READ
 * would add is gap and next-key locks: the coupon release's scan of the sparse
 * `locked_order_id` index would lock the gaps that the application's checkout writes into
 * (blocking checkouts for the length of an expiry batch), and rows a locking read looks at but
 * does not match (a LOCKED coupon in a batch of ACTIVE ones) would stay locked to the end of
 * the transaction, which is how a coupon expiry and an order cancellation could deadlock.
 * Binlog format is ROW, which READ COMMITTED requires.
 *
 * IN lists stay IN lists: MariaDB turns an IN list of `in_predicate_conversion_threshold` (1000)
 * or more values into a semi-join with a table of the values, and for the coupon release that
 * plan was a full scan of `coupons` under FOR UPDATE, FORCE INDEX notwithstanding (an expiry
 * batch has up to 2000 ids). The session sets the threshold to 0 (never convert); MySQL has no
 * such variable and no such conversion, so its "unknown variable" error is ignored.
 */
import knexFactory, { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { migrationSource } from './migrations';
import { armStatementDeadlines, type DeadlineConnection } from './statement-deadline';

export type Db = Knex;

/**
 * `logger` receives knex's own warnings (a connection lost during an outage, deprecations) as
 * structured logs; without one they are dropped (tests' pools), never printed to the console.
 */
/**
 * Where and as whom mysql2 connects to `db`, for the pools here and for the latency probe's own
 * connection (db/latency-probe.ts). The server's certificate is always verified when TLS is on:
 * encryption without verification would let anything in the path pose as the database.
 */
export function driverConnection(db: Pick<Config['db'], 'host' | 'port' | 'user' | 'password' | 'tls'>) {
  return {
    host: db.host,
    port: db.port,
    user: db.user,
    password: db.password,
    charset: 'utf8mb4',
    ...(db.tls.enabled && { ssl: { rejectUnauthorized: true, ...(db.tls.ca !== undefined && { ca: db.tls.ca }) } }),
  };
}

/** demoTables: whether migrations create the demo coupons/orders (db/migrations/index.ts); the local default. */
/** statementTimeoutMs: every statement's deadline on this pool (db/statement-deadline.ts), the connection's `statementTimeoutMs` unless given (migrate's DDL). */
export function createDb(db: Config['db'], opts: { database?: string | null; logger?: Logger; demoTables?: boolean; statementTimeoutMs?: number } = {}): Db {
  const statementTimeoutMs = opts.statementTimeoutMs ?? db.statementTimeoutMs;
  const database = opts.database === null ? undefined : (opts.database ?? db.database);
  const log = opts.logger?.child({ component: 'knex' });
  return knexFactory({
    client: 'mysql2',
    log: {
      warn: (message: unknown) => log?.warn(String(message)),
      error: (message: unknown) => log?.error(String(message)),
      deprecate: (method: unknown, alternative: unknown) => log?.warn({ method, alternative }, 'knex deprecation'),
      debug: () => undefined,
    },
    connection: {
      ...driverConnection(db),
      database,
      timezone: 'Z',
      dateStrings: false,
      supportBigNumbers: true,
      // Statements prepared per connection (the event_outbox insert, one per batch size:
      // publish/sql/insert-event-outbox.ts), the least recently used closed beyond this: the
      // server's max_prepared_stmt_count (16,382 by default) is shared by every connection.
      maxPreparedStatements: 8,
    },
    pool: {
      min: 0,
      max: db.poolMax,
      afterCreate: (conn: DeadlineConnection, done: (err: Error | null, c: unknown) => void) => {
        armStatementDeadlines(conn, statementTimeoutMs);
        const query = (sql: string, cb: (err: Error | null) => void) => conn.query(sql, cb);
        // Two statements: SET TRANSACTION cannot share a SET with variables (MySQL and MariaDB).
        // A row lock waited for gives up (1205, retriable) well before the statement's deadline,
        // so a statement past its deadline is one the database did not answer, not a lock queue.
        query(`SET time_zone = '+00:00', innodb_lock_wait_timeout = ${db.lockWaitTimeoutS}`, (err) => {
          if (err) return done(err, conn);
          query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', (err2) => {
            if (err2) return done(err2, conn);
            query('SET SESSION in_predicate_conversion_threshold = 0', (err3) => done(isUnknownVariable(err3) ? null : err3, conn));
          });
        });
      },
    },
    migrations: { migrationSource: migrationSource({ demoTables: opts.demoTables ?? true }), tableName: 'knex_migrations' },
    acquireConnectionTimeout: 10_000,
  });
}

/** ER_UNKNOWN_SYSTEM_VARIABLE: a server without the setting (MySQL). */
function isUnknownVariable(err: Error | null): boolean {
  return (err as { errno?: number } | null)?.errno === 1193;
}
