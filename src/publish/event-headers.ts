/**
 * The Kafka headers every published event carries. Subscribers route and deduplicate on
 * headers without decoding the Avro value: `event_key` (the dedup key, invariant I4) and
 * `event_type`, plus the CloudEvents Kafka binding's binary-mode attributes (`ce_*`, and
 * `content-type` for datacontenttype), so CloudEvents SDKs read our messages as events.
 *
 * The wire format, honestly: a CloudEvents binary-mode message whose data (the Kafka value) is
 * Confluent-framed Avro (magic byte 0, the 4-byte schema id, then the Avro body), not bare Avro.
 * `ce_dataschema` names that schema in the registry; `ce_subject` is the entity id (= the key);
 * `ce_type` is the event's ceType from the entities file.
 */
import type { EventSpec } from '../core/entity-catalogue';

export const CE_SPEC_VERSION = '1.0';
/** Names the producing application, not an instance: the same for every process and replica. */
export const CE_SOURCE = '/timebucket/expirer';
export const CONTENT_TYPE = 'application/avro';

export type EventHeaders = Readonly<Record<string, string>>;

/** ±8.64e15 ms is the range of a JS Date: beyond it an instant has no ISO-8601 ce_time. */
export const MAX_INSTANT_MS = 8.64e15;

/**
 * The registry's URI of a schema id, for ce_dataschema (GET <registry>/schemas/ids/<id> returns
 * it). Credentials in the registry URL (user:password@) never go out with the events.
 */
export function dataSchemaUri(registryUrl: string, schemaId: number): string {
  const url = new URL(registryUrl);
  url.username = '';
  url.password = '';
  return `${url.toString().replace(/\/+$/, '')}/schemas/ids/${schemaId}`;
}

/** Inputs come from a validated payload; an invalid occurredAtMs is a programmer error. */
export function eventHeaders(
  e: Readonly<{ eventKey: string; event: Pick<EventSpec, 'type' | 'ceType'>; entityId: string; occurredAtMs: number; dataSchema: string }>,
): EventHeaders {
  if (!Number.isFinite(e.occurredAtMs) || Number.isNaN(new Date(e.occurredAtMs).getTime())) {
    throw new RangeError(`occurredAtMs is not a valid instant: ${e.occurredAtMs}`);
  }
  return Object.freeze({
    event_key: e.eventKey,
    event_type: e.event.type,
    ce_id: e.eventKey,
    ce_type: e.event.ceType,
    ce_source: CE_SOURCE,
    ce_subject: e.entityId,
    ce_dataschema: e.dataSchema,
    ce_time: new Date(e.occurredAtMs).toISOString(),
    ce_specversion: CE_SPEC_VERSION,
    'content-type': CONTENT_TYPE,
  });
}
