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
 * either form into the decimal string the expirer and the relay work with. Parameters go the
 * other way as decimal strings, which MariaDB compares with BIGINT columns exactly.
 */
import knexFactory, { Knex } from 'knex';
import type { Config } from '../config';
import { migrationSource } from './migrations';

export type Db = Knex;

export function createDb(db: Config['db'], opts: { database?: string | null } = {}): Db {
  const database = opts.database === null ? undefined : (opts.database ?? db.database);
  return knexFactory({
    client: 'mysql2',
    connection: {
      host: db.host,
      port: db.port,
      user: db.user,
      password: db.password,
      database,
      timezone: 'Z',
      dateStrings: false,
      supportBigNumbers: true,
      charset: 'utf8mb4',
    },
    pool: {
      min: 0,
      max: db.poolMax,
      afterCreate: (conn: { query: (sql: string, cb: (err: Error | null) => void) => void }, done: (err: Error | null, c: unknown) => void) => {
        conn.query("SET time_zone = '+00:00'", (err) => done(err, conn));
      },
    },
    migrations: { migrationSource, tableName: 'knex_migrations' },
    acquireConnectionTimeout: 10_000,
  });
}
