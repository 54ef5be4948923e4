/**
 * An outbox row as the relay works with it: ids and entity ids as exact decimal strings (they
 * pass 2^53), the payload as the JSON text the expirer wrote.
 */
import { bigintString } from '../../db/bigint-string';

export type OutboxRow = Readonly<{
  id: string;
  eventKey: string;
  eventType: string;
  entityType: string;
  entityId: string;
  payload: string;
}>;

/** The columns of an OutboxRow, as every query that reads one selects them. */
export const OUTBOX_ROW_COLUMNS = 'id, event_key, event_type, entity_type, entity_id, payload';

export type OutboxRowRecord = { id: number | string; event_key: string; event_type: string; entity_type: string; entity_id: number | string; payload: string };

export function toOutboxRow(r: OutboxRowRecord): OutboxRow {
  return {
    id: bigintString(r.id, 'outbox.id'),
    eventKey: r.event_key,
    eventType: r.event_type,
    entityType: r.entity_type,
    entityId: bigintString(r.entity_id, 'outbox.entity_id'),
    payload: r.payload,
  };
}
