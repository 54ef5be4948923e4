/**
 * Gives up a loop's lease on rows it could not publish (a send or an encode failed). Inputs:
 * row ids, the loop's lease owner id. Output: rows released.
 *
 * The rows go back to the head of the outbox at once, instead of staying leased to a loop that
 * is backing off until the lease runs out; the next claim, by any loop, takes them first. Before
 * this, the failed loop's next cycle claimed a fresh batch while still holding the unsent one:
 * one more batch hoarded per failed cycle, and rows whose lease ran out before their turn
 * waited a whole lease. claimed_by is kept: it says who tried last.
 * Safe to re-run: only unpublished rows this loop still holds are touched.
 */
import type { Knex } from 'knex';

export async function releaseClaim(db: Knex, ids: readonly string[], relayId: string): Promise<number> {
  if (ids.length === 0) return 0;
  const [result] = (await db.raw('UPDATE outbox SET claim_until = NULL WHERE id IN (?) AND claimed_by = ? AND published_at IS NULL', [
    [...ids],
    relayId,
  ])) as [{ affectedRows: number }];
  return result.affectedRows;
}
