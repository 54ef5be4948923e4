/**
 * The writer's heartbeat row as a replica has applied it (db/replica-heartbeat.ts):
 *
 *   SELECT seq FROM timebucket_heartbeat WHERE writer = ?
 *
 * Inputs: a pool on the replica (the replica reader's account: SELECT on this table alone), the
 * writer's id. Output: the last beat the replica applied, or undefined before the first reaches
 * it. Safe to re-run: a primary-key read of one row, on a read-only server.
 */
import type { Knex } from 'knex';

export async function readHeartbeat(db: Pick<Knex, 'raw'>, writer: string): Promise<number | undefined> {
  const [rows] = (await db.raw('SELECT seq FROM timebucket_heartbeat WHERE writer = ?', [writer])) as [Array<{ seq: number | string }>];
  return rows[0] === undefined ? undefined : Number(rows[0].seq);
}
