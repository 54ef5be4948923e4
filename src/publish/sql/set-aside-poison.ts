/**
 * Moves rows that can never be encoded out of the outbox into outbox_poison. Inputs: the rows
 * with why each is poison, the loop's lease owner id. Output: rows set aside.
 *
 * A poison row is never published (it was never sent, so it must not look published), and it
 * must not stay in the outbox either: unpublished, it would sit in the hot unpublished range of
 * idx_outbox_unpublished for good, read past by every claim and every backlog count. So one
 * transaction copies it to outbox_poison (same id and columns, the reason, who set it aside)
 * and deletes it here. Only rows this loop still holds unpublished are moved: a row whose lease
 * was lost is the new holder's to judge.
 *
 * To redrive once the cause is fixed (the payload corrected in outbox_poison, or a schema
 * registered that accepts it): redrive-poison.ts moves it back under its old id.
 * Safe to re-run: rows no longer held are left alone; a row already in outbox_poison is updated.
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';

export type PoisonRow = Readonly<{ id: string; reason: string }>;

/** outbox_poison.reason is VARCHAR(512). */
const MAX_REASON_CHARS = 512;

export async function setAsidePoison(db: Knex, rows: readonly PoisonRow[], relayId: string): Promise<number> {
  if (rows.length === 0) return 0;
  return db.transaction(async (trx) => {
    const [held] = (await trx.raw('SELECT id FROM outbox WHERE id IN (?) AND claimed_by = ? AND published_at IS NULL FOR UPDATE', [
      rows.map((r) => r.id),
      relayId,
    ])) as [Array<{ id: number | string }>];
    const heldIds = new Set(held.map((r) => bigintString(r.id, 'outbox.id')));
    const moving = rows.filter((r) => heldIds.has(r.id));
    if (moving.length === 0) return 0;
    // One statement per row: each has its own reason, and poison is rare.
    for (const row of moving) {
      await trx.raw(
        `INSERT INTO outbox_poison (id, event_key, event_type, entity_type, entity_id, payload, created_at, reason, set_aside_by)
         SELECT id, event_key, event_type, entity_type, entity_id, payload, created_at, ?, ? FROM outbox WHERE id = ?
         ON DUPLICATE KEY UPDATE reason = VALUES(reason), set_aside_by = VALUES(set_aside_by), set_aside_at = NOW(3)`,
        [row.reason.slice(0, MAX_REASON_CHARS), relayId, row.id],
      );
    }
    await trx.raw('DELETE FROM outbox WHERE id IN (?)', [moving.map((r) => r.id)]);
    return moving.length;
  });
}
