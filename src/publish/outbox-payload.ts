/**
 * Checks an outbox row before it is encoded: the parts Avro cannot check. A row that fails is
 * poison (set aside, never retried), so only a fault in the data belongs here, never one that
 * waiting could fix. Avro encoding then checks every field's type against the schema.
 *
 * The row's columns and its payload must agree: the headers and the message key are taken from
 * the columns, the value from the payload, and a subscriber must never see them disagree.
 * Ids in the payload are decimal strings (exact beyond 2^53); a row written before that carries
 * them as JSON numbers, accepted while they are safe integers (a larger one may be rounded).
 */
import { findEvent, type EntityCatalogue, type EventSpec } from '../core/entity-catalogue';
import type { OutboxRow } from './sql/outbox-row';
import { MAX_INSTANT_MS } from './event-headers';

export type ParsedPayload =
  | Readonly<{ ok: true; event: EventSpec; payload: Readonly<Record<string, unknown>>; occurredAtMs: number }>
  | Readonly<{ ok: false; reason: string }>;


/** `catalogue` names the event types there are; a row of any other type is poison. */
export function parseOutboxPayload(catalogue: EntityCatalogue, row: Pick<OutboxRow, 'eventKey' | 'eventType' | 'entityId' | 'payload'>): ParsedPayload {
  const event = findEvent(catalogue, row.eventType);
  if (event === undefined) return poison(`unknown event type '${row.eventType}'`);

  let parsed: unknown;
  try {
    parsed = JSON.parse(row.payload);
  } catch {
    return poison('payload is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return poison('payload is not a JSON object');
  const payload = parsed as Record<string, unknown>;

  if (payload['event_type'] !== event.type) return poison(`payload event_type ${describe(payload['event_type'])} differs from the row's ${event.type}`);
  if (payload['event_key'] !== row.eventKey) return poison(`payload event_key ${describe(payload['event_key'])} differs from the row's`);
  // The payload field that holds the entity id (= the message key).
  const id = payload[event.idField];
  if (exactIdText(id) !== row.entityId) return poison(`payload ${event.idField} ${describe(id)} differs from the row's entity_id ${row.entityId}`);
  const occurredAtMs = payload['occurred_at'];
  if (typeof occurredAtMs !== 'number' || !Number.isSafeInteger(occurredAtMs) || Math.abs(occurredAtMs) > MAX_INSTANT_MS) {
    return poison(`payload occurred_at ${describe(occurredAtMs)} is not an epoch-millisecond instant`);
  }
  return { ok: true, event, payload, occurredAtMs };
}

/** The id as the decimal text it is known exactly by, or undefined when it is not exact. */
function exactIdText(id: unknown): string | undefined {
  if (typeof id === 'string') return id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
  return undefined;
}

function poison(reason: string): ParsedPayload {
  return { ok: false, reason };
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
