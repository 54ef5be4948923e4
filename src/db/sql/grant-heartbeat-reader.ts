/**
 * The replica reader's one privilege, granted by `timebucket migrate` on the primary (the grant
 * replicates; a replica is read-only):
 *
 *   GRANT SELECT ON `db`.`timebucket_heartbeat` TO 'user'@'host'
 *
 * Inputs: the owner's pool, the database's schema name, the reader's account (TB_DB_REPLICA_USER,
 * host %). Output: the statement run. The account must exist (the server refuses to create one
 * by GRANT). Safe to re-run: a grant held already changes nothing. Identifiers are checked and
 * quoted (db/sql/grant-statements.ts), never interpolated unchecked.
 */
import type { Knex } from 'knex';
import type { DbAccount } from '../service-grants';
import { quoteId } from '../quote-id';
import { accountSql } from './grant-statements';

export async function grantHeartbeatReader(db: Pick<Knex, 'raw'>, database: string, reader: DbAccount): Promise<string> {
  const statement = `GRANT SELECT ON ${quoteId(database)}.${quoteId('timebucket_heartbeat')} TO ${accountSql(reader)}`;
  await db.raw(statement);
  return statement;
}
