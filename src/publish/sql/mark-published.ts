/**
 * Marks rows published after Kafka acknowledged them (acks = all), in the loop's transaction that
 * holds their locks (lock-outbox-batch.ts). Inputs: the transaction, row ids, the loop's id.
 * Output: rows marked.
 *
 * claimed_by records which loop published the row. A row is never marked unless its send was
 * acknowledged; if the transaction then fails to commit, the rows are sent again by the next
 * loop to lock them (at least once; subscribers deduplicate by event_key, invariant I4).
 * Safe to re-run: rows already published are left as they are (published_at keeps its value).
 */
import type { Knex } from 'knex';

export async function markPublished(trx: Knex.Transaction | Knex, ids: readonly string[], relayId: string): Promise<number> {
  if (ids.length === 0) return 0;
  const [result] = (await trx.raw('UPDATE outbox SET published_at = NOW(3), claimed_by = ? WHERE id IN (?) AND published_at IS NULL', [
    relayId,
    [...ids],
  ])) as [{ affectedRows: number }];
  return result.affectedRows;
}
