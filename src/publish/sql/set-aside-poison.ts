/**
 * Moves rows that can never be encoded out of the outbox into outbox_poison, in the loop's
 * transaction that holds their locks (lock-outbox-batch.ts). Inputs: the transaction, the rows
 * with why each is poison, the loop's id. Output: rows set aside.
 *
 * A poison row is never published (it was never sent, so it must not look published), and it
 * must not stay in the outbox either: unpublished, it would sit in the hot unpublished range of
 * idx_outbox_unpublished for good, locked and read past by every claim. So it is copied to
 * outbox_poison (same id and columns, the reason, who set it aside) and deleted here.
 *
 * To redrive once the cause is fixed (the payload corrected in outbox_poison, or a schema
 * registered that accepts it): redrive-poison.ts moves it back under its old id.
 * Safe to re-run: only rows still unpublished in the outbox move; a row already in
 * outbox_poison is updated.
 */
import type { Knex } from 'knex';

export type PoisonRow = Readonly<{ id: string; reason: string }>;

/** outbox_poison.reason is VARCHAR(512). */
const MAX_REASON_CHARS = 512;

export async function setAsidePoison(trx: Knex.Transaction, rows: readonly PoisonRow[], relayId: string): Promise<number> {
  if (rows.length === 0) return 0;
  // One statement per row: each has its own reason, and poison is rare.
  for (const row of rows) {
    await trx.raw(
      `INSERT INTO outbox_poison (id, event_key, event_type, entity_type, entity_id, payload, created_at, reason, set_aside_by)
       SELECT id, event_key, event_type, entity_type, entity_id, payload, created_at, ?, ? FROM outbox WHERE id = ? AND published_at IS NULL
       ON DUPLICATE KEY UPDATE reason = VALUES(reason), set_aside_by = VALUES(set_aside_by), set_aside_at = NOW(3)`,
      [row.reason.slice(0, MAX_REASON_CHARS), relayId, row.id],
    );
  }
  const [deleted] = (await trx.raw('DELETE FROM outbox WHERE id IN (?) AND published_at IS NULL', [rows.map((r) => r.id)])) as [{ affectedRows: number }];
  return deleted.affectedRows;
}
