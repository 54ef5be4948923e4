/**
 * The heartbeat's beat on the primary (db/replica-heartbeat.ts), one row per writer:
 *
 *   INSERT INTO timebucket_heartbeat (writer, seq, ts) VALUES (?, ?, NOW(6))
 *     ON DUPLICATE KEY UPDATE seq = ?, ts = NOW(6)
 *
 * Inputs: the database's pool (the service account: INSERT and UPDATE on the table), the
 * writer's id and the beat's number. Output: none; the beat is committed when it resolves
 * (autocommit), which is when the writer logs it (core/replica-lag.ts). Safe to re-run: an upsert
 * of one row by its primary key; the parameters repeated rather than VALUES(), which MySQL 8.0.20
 * deprecated. A replica applies it as one row event whatever the binlog format.
 */
import type { Knex } from 'knex';

export async function writeHeartbeat(db: Pick<Knex, 'raw'>, writer: string, seq: number): Promise<void> {
  await db.raw('INSERT INTO timebucket_heartbeat (writer, seq, ts) VALUES (?, ?, NOW(6)) ON DUPLICATE KEY UPDATE seq = ?, ts = NOW(6)', [writer, seq, seq]);
}
