/**
 * One outbox row per transition. Inputs: events, each with its entity and id. Output: rows
 * inserted.
 *
 *   INSERT IGNORE INTO outbox (event_key, event_type, entity_type, entity_id, payload) VALUES (?, ?, ?, ?, ?), …
 *
 * Safe to re-run: INSERT IGNORE on the unique event_key, so a replayed batch adds nothing
 * (invariant I4: one outbox row per transition). The outbox is timebucket's own table, so its
 * names are fixed here, not taken from the entities file.
 */
import type { Knex } from 'knex';
import type { EventPayload } from '../../core/events';

export type OutboxInsert = Readonly<{ event: EventPayload; entityType: string; entityId: string }>;

export async function insertOutbox(trx: Knex.Transaction, rows: readonly OutboxInsert[]): Promise<number> {
  if (rows.length === 0) return 0;
  const placeholders = rows.map(() => '(?, ?, ?, ?, ?)').join(', ');
  const values = rows.flatMap((r) => [r.event.event_key, r.event.event_type, r.entityType, r.entityId, JSON.stringify(r.event)]);
  const [result] = (await trx.raw(
    `INSERT IGNORE INTO outbox (event_key, event_type, entity_type, entity_id, payload) VALUES ${placeholders}`,
    values,
  )) as [{ affectedRows: number }];
  return result.affectedRows;
}
