/**
 * Encodes an event into the Kafka message the outbox router publishes, inside the expiry
 * transaction: the value Confluent-framed Avro (magic byte 0, the 4-byte big-endian schema id,
 * then the Avro body), and the per-event headers. The same bytes and headers the polling relay
 * sent (outbox-relay.ts encodes through the registry client, this through avsc directly, from
 * the same schema text with the same exact-long hook), without a registry call per event.
 *
 * The schema ids arrive when a registration succeeds or a saved one is read
 * (schema-id-source.ts): until an event type has one, `encode` returns undefined and the caller
 * writes the event to the relay's JSON outbox instead, so a registry outage holds publishing,
 * never the transition. An event its schema rejects returns undefined with the reason, and goes
 * the same way: the relay then sets it aside as poison, named (outbox-relay.ts).
 */
import { Type } from 'avsc';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { EventTopics } from '../core/event-catalogue';
import type { EventPayload } from '../core/events';
import { dataSchemaUri, MAX_INSTANT_MS } from './event-headers';
import { exactLongHook } from './exact-long';
import type { SchemaIds } from './schemas';

/** One event_outbox row's values (expire/sql/insert-event-outbox.ts). */
export type EncodedEvent = Readonly<{
  eventKey: string;
  topic: string;
  entityId: string;
  eventType: string;
  ceType: string;
  ceTime: string;
  dataSchema: string;
  payload: Buffer;
}>;

export type EncodeResult = Readonly<{ ok: true; row: EncodedEvent }> | Readonly<{ ok: false; reason: string }>;

export type EventEncoder = Readonly<{
  /** The ids of a registration (or the saved ones): from now on those event types are encoded. */
  setSchemaIds: (ids: SchemaIds) => void;
  /** Whether every event type has a schema id. */
  complete: () => boolean;
  /** How many event types have none yet (their events go to the relay's outbox). */
  missing: () => number;
  encode: (event: EventPayload, entityId: string) => EncodeResult;
}>;

type Prepared = { spec: EntityCatalogue['events'][number]; topic: string; type: Type; frame?: Buffer; dataSchema?: string };

/** Encoded into one scratch buffer, then copied out once: one allocation an event. */
let scratch = Buffer.alloc(64 * 1024);

function frame(p: Prepared, event: EventPayload): Buffer {
  p.frame!.copy(scratch, 0);
  let end = p.type.encode(event, scratch, 5);
  if (end < 0) {
    // Larger than the scratch buffer (a negative end is the size it lacks): grow it for good.
    scratch = Buffer.alloc(Math.max(scratch.length * 2, scratch.length - end));
    p.frame!.copy(scratch, 0);
    end = p.type.encode(event, scratch, 5);
  }
  const out = Buffer.allocUnsafe(end);
  scratch.copy(out, 0, 0, end);
  return out;
}

/** `schemaTexts`: eventSchemas(catalogue, tables), the texts registered; `registryUrl`: for ce_dataschema. */
export function createEventEncoder(opts: Readonly<{ catalogue: EntityCatalogue; topics: EventTopics; schemaTexts: Readonly<Record<string, string>>; registryUrl: string }>): EventEncoder {
  const prepared = new Map<string, Prepared>();
  // A batch's events share one occurred_at (the transaction's db-now): its text once a batch.
  let lastTimeMs = Number.NaN;
  let lastTime = '';
  const ceTimeOf = (ms: number): string => {
    if (ms !== lastTimeMs) {
      lastTime = new Date(ms).toISOString();
      lastTimeMs = ms;
    }
    return lastTime;
  };
  for (const spec of opts.catalogue.events) {
    const text = opts.schemaTexts[spec.type];
    const topic = opts.topics[spec.type];
    if (text === undefined || topic === undefined) throw new RangeError(`event ${spec.type}: no schema text or no topic`);
    prepared.set(spec.type, { spec, topic, type: Type.forSchema(JSON.parse(text), { typeHook: exactLongHook }) });
  }
  return {
    setSchemaIds(ids) {
      for (const [eventType, id] of Object.entries(ids)) {
        const p = prepared.get(eventType);
        if (p === undefined) continue;
        const frame = Buffer.alloc(5);
        frame.writeUInt32BE(id, 1);
        p.frame = frame;
        p.dataSchema = dataSchemaUri(opts.registryUrl, id);
      }
    },
    complete: () => [...prepared.values()].every((p) => p.frame !== undefined),
    missing: () => [...prepared.values()].filter((p) => p.frame === undefined).length,
    encode(event, entityId) {
      const p = prepared.get(event.event_type);
      if (p === undefined) return { ok: false, reason: `unknown event type '${event.event_type}'` };
      if (p.frame === undefined || p.dataSchema === undefined) return { ok: false, reason: `no schema id for ${event.event_type} yet` };
      const occurredAtMs = event['occurred_at'];
      if (typeof occurredAtMs !== 'number' || !Number.isSafeInteger(occurredAtMs)) return { ok: false, reason: 'occurred_at is not an epoch-millisecond instant' };
      if (!p.type.isValid(event)) {
        const invalid: string[] = [];
        p.type.isValid(event, { errorHook: (path) => invalid.push(path.join('.')) });
        return { ok: false, reason: `does not match the Avro schema at ${invalid.join(', ')}` };
      }
      // ce_time as eventHeaders writes it (publish/event-headers.ts); a Date this far out has none.
      if (Math.abs(occurredAtMs) > MAX_INSTANT_MS) return { ok: false, reason: 'occurred_at is not an epoch-millisecond instant' };
      return {
        ok: true,
        row: {
          eventKey: event.event_key,
          topic: p.topic,
          entityId,
          eventType: event.event_type,
          ceType: p.spec.ceType,
          ceTime: ceTimeOf(occurredAtMs),
          dataSchema: p.dataSchema,
          payload: frame(p, event),
        },
      };
    },
  };
}
