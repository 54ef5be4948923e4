/**
 * Encodes an event into the Kafka message the outbox router publishes, inside the expiry
 * transaction: the value Confluent-framed Avro (magic byte 0, the 4-byte big-endian schema id,
 * then the Avro body), and the per-event headers, without a registry call per event.
 *
 * The schema ids are the ones `timebucket schemas register` saved (schema-id-source.ts): until
 * an event type has one, `encode` fails with `missing-schema-id` and the caller holds the
 * transition (it is retried; nothing moves without its event). An event its schema rejects, or
 * one larger than its topic takes (`maxEventBytes`: Connect would fail on it at every restart,
 * and stop every later event of its database), fails with `rejected` and the reason: the caller
 * dead-letters it and the transition commits (publish/outbox-writer.ts).
 */
import { Type } from 'avsc';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { EventTopics } from '../core/event-catalogue';
import type { EventPayload } from '../core/events';
import { dataSchemaUri, MAX_INSTANT_MS } from './event-headers';
import { exactLongHook } from './exact-long';
import type { SchemaIds } from './schemas';

/** One event_outbox row's values (publish/sql/insert-event-outbox.ts). */
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

/**
 * `missing-schema-id`: its type has no saved schema id yet (retry later); `rejected`: it can never
 * be published as it is (its schema rejects it, or it is too large), with the error code to file it under.
 */
export type EncodeResult =
  | Readonly<{ ok: true; row: EncodedEvent }>
  | Readonly<{ ok: false; failure: 'missing-schema-id'; reason: string }>
  | Readonly<{ ok: false; failure: 'rejected'; code: 'EVENT_REJECTED' | 'EVENT_TOO_LARGE'; reason: string }>;

/**
 * What a Kafka record of the event may weigh, key and headers included: the producer's
 * max.request.size and the broker's message.max.bytes are both about 1 MiB by default. The
 * record's own framing (offsets, lengths, attributes) is under a hundred bytes.
 */
export const DEFAULT_MAX_EVENT_BYTES = 1_000_000;

export type EventEncoder = Readonly<{
  /** The ids of a registration (or the saved ones): from now on those event types are encoded. */
  setSchemaIds: (ids: SchemaIds) => void;
  /** Whether every event type has a schema id. */
  complete: () => boolean;
  /** Whether this event type has one. */
  has: (eventType: string) => boolean;
  /** How many event types have none yet (their transitions wait). */
  missing: () => number;
  encode: (event: EventPayload, entityId: string) => EncodeResult;
}>;

/** The router's header names, ce_time, ce_specversion, ce_source and content-type, and the id header: generously counted. */
const HEADER_OVERHEAD_BYTES = 512;

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

/**
 * `schemaTexts`: eventSchemas(catalogue, tables), the texts registered; `registryUrl`: for
 * ce_dataschema; `maxEventBytes`: per event topic, the largest record it takes (DEFAULT_MAX_EVENT_BYTES).
 */
export function createEventEncoder(
  opts: Readonly<{
    catalogue: EntityCatalogue;
    topics: EventTopics;
    schemaTexts: Readonly<Record<string, string>>;
    registryUrl: string;
    maxEventBytes?: (topic: string) => number;
  }>,
): EventEncoder {
  const maxBytesOf = opts.maxEventBytes ?? (() => DEFAULT_MAX_EVENT_BYTES);
  const prepared = preparedEvents(opts);
  const ceTimeOf = lastTimeText();
  return {
    setSchemaIds(ids) {
      for (const [eventType, id] of Object.entries(ids)) {
        const p = prepared.get(eventType);
        if (p === undefined) continue;
        p.frame = schemaFrame(id);
        p.dataSchema = dataSchemaUri(opts.registryUrl, id);
      }
    },
    complete: () => [...prepared.values()].every((p) => p.frame !== undefined),
    has: (eventType) => prepared.get(eventType)?.frame !== undefined,
    missing: () => [...prepared.values()].filter((p) => p.frame === undefined).length,
    encode(event, entityId) {
      const p = prepared.get(event.event_type);
      if (p === undefined) return rejected(`unknown event type '${event.event_type}'`);
      if (p.frame === undefined || p.dataSchema === undefined)
        return { ok: false, failure: 'missing-schema-id', reason: `no schema id for ${event.event_type} yet` };
      const occurredAtMs = event['occurred_at'];
      if (typeof occurredAtMs !== 'number' || !Number.isSafeInteger(occurredAtMs)) return rejected('occurred_at is not an epoch-millisecond instant');
      if (!p.type.isValid(event)) {
        const invalid: string[] = [];
        p.type.isValid(event, { errorHook: (path) => invalid.push(path.join('.')) });
        return rejected(`does not match the Avro schema at ${invalid.join(', ')}`);
      }
      // ce_time as eventHeaders writes it (publish/event-headers.ts); a Date this far out has none.
      if (Math.abs(occurredAtMs) > MAX_INSTANT_MS) return rejected('occurred_at is not an epoch-millisecond instant');
      const payload = frame(p, event);
      const recordBytes = recordBytesOf(p.spec.ceType, p.dataSchema, event, entityId, payload);
      const maxBytes = maxBytesOf(p.topic);
      if (recordBytes > maxBytes) return rejected(`${recordBytes} bytes as a Kafka record, over the ${maxBytes} its topic ${p.topic} takes`, 'EVENT_TOO_LARGE');
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
          payload,
        },
      };
    },
  };
}

/** Each event type's topic and Avro type, its schema id still to come (setSchemaIds). */
function preparedEvents(
  opts: Readonly<{ catalogue: EntityCatalogue; topics: EventTopics; schemaTexts: Readonly<Record<string, string>> }>,
): Map<string, Prepared> {
  const prepared = new Map<string, Prepared>();
  for (const spec of opts.catalogue.events) {
    const text = opts.schemaTexts[spec.type];
    const topic = opts.topics[spec.type];
    if (text === undefined || topic === undefined) throw new RangeError(`event ${spec.type}: no schema text or no topic`);
    prepared.set(spec.type, { spec, topic, type: Type.forSchema(JSON.parse(text), { typeHook: exactLongHook }) });
  }
  return prepared;
}

/** ce_time's text, kept for the last instant: a batch's events share one occurred_at (the transaction's db-now). */
function lastTimeText(): (ms: number) => string {
  let lastTimeMs = Number.NaN;
  let lastTime = '';
  return (ms) => {
    if (ms !== lastTimeMs) {
      lastTime = new Date(ms).toISOString();
      lastTimeMs = ms;
    }
    return lastTime;
  };
}

/**
 * The record as the router publishes it: the value, the key (the entity id) and the headers (the
 * row's columns, named as the connector places them, plus the router's own few).
 */
function recordBytesOf(
  ceType: string,
  dataSchema: string,
  event: Readonly<{ event_key: string; event_type: string }>,
  entityId: string,
  payload: Buffer,
): number {
  const headerBytes = HEADER_OVERHEAD_BYTES + event.event_key.length * 2 + event.event_type.length + ceType.length + entityId.length + dataSchema.length;
  return payload.length + entityId.length + headerBytes;
}

/** An event that can never be encoded: dead-lettered in its transaction, with the reason. */
function rejected(reason: string, code: 'EVENT_REJECTED' | 'EVENT_TOO_LARGE' = 'EVENT_REJECTED') {
  return { ok: false, failure: 'rejected', code, reason } as const;
}

/** The Confluent wire frame's first five bytes: magic byte 0, then the schema id. */
function schemaFrame(id: number): Buffer {
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(id, 1);
  return frame;
}
