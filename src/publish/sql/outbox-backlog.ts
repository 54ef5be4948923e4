/**
 * The outbox backlog for metrics. Inputs: none. Output: unpublished rows (poison excluded) and
 * the age of the oldest by the database clock.
 * Safe to re-run: a read. It walks the (published_at, id) index over the NULL range only, so its
 * cost follows the backlog, not the table.
 */
import type { Knex } from 'knex';
import { POISON_OWNER } from './set-aside-poison';

export async function readOutboxBacklog(db: Knex): Promise<{ rows: number; oldestAgeSeconds: number }> {
  const [result] = (await db.raw(
    `SELECT COUNT(*) AS n, COALESCE(TIMESTAMPDIFF(MICROSECOND, MIN(created_at), NOW(3)), 0) / 1e6 AS age
       FROM outbox WHERE published_at IS NULL AND (claimed_by IS NULL OR claimed_by <> ?)`,
    [POISON_OWNER],
  )) as [Array<{ n: number; age: number | string }>];
  return { rows: Number(result[0]?.n ?? 0), oldestAgeSeconds: Number(result[0]?.age ?? 0) };
}
