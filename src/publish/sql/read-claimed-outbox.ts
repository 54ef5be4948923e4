/**
 * Reads the unpublished rows this relay holds a live lease on, oldest first. Inputs: relay id,
 * limit. Output: the rows, ids and entity ids as decimal strings.
 *
 * Includes rows claimed by an earlier cycle of this relay that failed to publish (their lease
 * is still live), so they are retried at once instead of after the lease. Excludes rows whose
 * lease expired: another relay may be taking them over.
 * Safe to re-run: a plain read.
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';

export type OutboxRow = Readonly<{
  id: string;
  eventKey: string;
  eventType: string;
  entityType: string;
  entityId: string;
  payload: string;
}>;

export async function readClaimedOutbox(db: Knex, relayId: string, limit: number): Promise<OutboxRow[]> {
  const [rows] = (await db.raw(
    `SELECT id, event_key, event_type, entity_type, entity_id, payload FROM outbox
      WHERE published_at IS NULL AND claimed_by = ? AND claim_until >= NOW(3)
      ORDER BY id LIMIT ?`,
    [relayId, limit],
  )) as [Array<{ id: number | string; event_key: string; event_type: string; entity_type: string; entity_id: number | string; payload: string }>];
  return rows.map((r) => ({
    id: bigintString(r.id, 'outbox.id'),
    eventKey: r.event_key,
    eventType: r.event_type,
    entityType: r.entity_type,
    entityId: bigintString(r.entity_id, 'outbox.entity_id'),
    payload: r.payload,
  }));
}
