/**
 * One outbox row per transition. Inputs: events. Output: rows inserted.
 * Safe to re-run: INSERT IGNORE on the unique event_key, so a replayed batch adds nothing
 * (invariant I4: one outbox row per transition).
 */
import type { Knex } from 'knex';
import type { DomainEvent } from '../../core/events';

export type OutboxInsert = { event: DomainEvent; entityType: 'coupon' | 'order'; entityId: string };

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
