/**
 * Marks rows published after Kafka acknowledged them (acks = all). Inputs: row ids, relay id.
 * Output: rows marked.
 *
 * Only rows this relay still holds are marked: if its lease expired and another relay took a
 * row over, that relay marks it (the row may then be published twice, which subscribers absorb
 * by event_key, invariant I4). A row is never marked unless its send was acknowledged.
 * Safe to re-run: rows already published are left as they are (published_at keeps its value).
 */
import type { Knex } from 'knex';

export async function markPublished(db: Knex, ids: readonly string[], relayId: string): Promise<number> {
  if (ids.length === 0) return 0;
  const [result] = (await db.raw(
    'UPDATE outbox SET published_at = NOW(3) WHERE id IN (?) AND claimed_by = ? AND published_at IS NULL',
    [[...ids], relayId],
  )) as [{ affectedRows: number }];
  return result.affectedRows;
}
