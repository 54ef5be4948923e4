/**
 * One event_outbox row per transition, the event already encoded (publish/event-encoder.ts).
 * Inputs: the encoded events. Output: rows inserted.
 *
 *   INSERT IGNORE INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload)
 *     VALUES (?, ?, ?, ?, ?, ?, ?, ?), …
 *
 * Safe to re-run: INSERT IGNORE on the unique event_key, so a replayed batch adds nothing
 * (invariant I4). The connector publishes what the binlog holds; no row is ever updated.
 */
import type { Knex } from 'knex';
import type { EncodedEvent } from '../../publish/event-encoder';

export async function insertEventOutbox(trx: Knex.Transaction, rows: readonly EncodedEvent[]): Promise<number> {
  if (rows.length === 0) return 0;
  const placeholders = rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
  const values = rows.flatMap((r) => [r.eventKey, r.topic, r.entityId, r.eventType, r.ceType, r.ceTime, r.dataSchema, r.payload]);
  const [result] = (await trx.raw(
    `INSERT IGNORE INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload) VALUES ${placeholders}`,
    values,
  )) as [{ affectedRows: number }];
  return result.affectedRows;
}
