/**
 * Moves rows that can never be encoded out of the relay's way. Inputs: row ids, relay id.
 * Output: rows set aside.
 *
 * A poison row stays unpublished (it was never sent, so it must not look published) but gets
 * claimed_by = 'poison' and a lease that never expires, so no relay claims it again and the rows
 * after it keep flowing. To redrive one after fixing it:
 *   UPDATE outbox SET claimed_by = NULL, claim_until = NULL WHERE id = ...
 * Safe to re-run: only rows this relay still holds and that are unpublished are touched.
 */
import type { Knex } from 'knex';

export const POISON_OWNER = 'poison';

export async function setAsidePoison(db: Knex, ids: readonly string[], relayId: string): Promise<number> {
  if (ids.length === 0) return 0;
  const [result] = (await db.raw(
    `UPDATE outbox SET claimed_by = ?, claim_until = '9999-12-31 00:00:00.000'
      WHERE id IN (?) AND claimed_by = ? AND published_at IS NULL`,
    [POISON_OWNER, [...ids], relayId],
  )) as [{ affectedRows: number }];
  return result.affectedRows;
}
