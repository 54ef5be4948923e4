/**
 * Moves set-aside rows back into the outbox to be published again, once the cause is fixed.
 * Inputs: ids (of outbox_poison rows). Output: rows put back.
 *
 * Each row returns under its old id, unleased and unpublished: it is the oldest unpublished row
 * of its part of the outbox, so the next claim takes it. If it is still poison it is set aside
 * again, with the new reason. The operator's equivalent in SQL (docs/operations.md):
 *   INSERT IGNORE INTO outbox (id, event_key, event_type, entity_type, entity_id, payload, created_at)
 *     SELECT id, event_key, event_type, entity_type, entity_id, payload, created_at FROM outbox_poison WHERE id IN (…);
 *   DELETE FROM outbox_poison WHERE id IN (…);
 * IGNORE: a row whose event_key is back in the outbox already (the transition was replayed after
 * a restore) needs no second copy; the poison copy is dropped either way.
 * Safe to re-run: ids no longer in outbox_poison are nothing to do.
 */
import type { Knex } from 'knex';

export async function redrivePoison(db: Knex, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  return db.transaction(async (trx) => {
    const [moved] = (await trx.raw(
      `INSERT IGNORE INTO outbox (id, event_key, event_type, entity_type, entity_id, payload, created_at)
       SELECT id, event_key, event_type, entity_type, entity_id, payload, created_at FROM outbox_poison WHERE id IN (?)`,
      [[...ids]],
    )) as [{ affectedRows: number }];
    await trx.raw('DELETE FROM outbox_poison WHERE id IN (?)', [[...ids]]);
    return moved.affectedRows;
  });
}
