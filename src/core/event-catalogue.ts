/**
 * The events, as the outside world sees them, read from the entity catalogue: one EventSpec per
 * event type (catalogue.events, from the entities file), and the topic each is published to
 * (the topology's `events` list). The relay (schema, headers, key), the registry registration,
 * the tests and the AsyncAPI document (docs/asyncapi.yaml, checked in make test) all read them
 * here, so an event type exists in one place: the entities file.
 *
 * Every event's fields, in order: the standard ones of its kind, then its declared fields:
 *   transition  event_key, event_type, <idField>, from_status, to_status, due_at, occurred_at, path
 *   reminder    event_key, event_type, <idField>, status, due_at, remind_before_ms, occurred_at, path
 *   digest      event_key, event_type, <idField: the user>, remind_before_ms, window_start,
 *               occurred_at, path, items; each item <itemIdField>, due_at, then the declared
 *               fields (a digest's declared fields are its items')
 * A schema file must hold exactly these (in any order: the two original files interleave them);
 * a derived schema holds them in this order.
 */
import { ConfigError } from './errors';
import type { EntityCatalogue, EventKind, EventSpec } from './entity-catalogue';
import type { Topology } from './topology';

const STANDARD: Readonly<Record<EventKind, (idField: string) => string[]>> = {
  transition: (id) => ['event_key', 'event_type', id, 'from_status', 'to_status', 'due_at', 'occurred_at', 'path'],
  reminder: (id) => ['event_key', 'event_type', id, 'status', 'due_at', 'remind_before_ms', 'occurred_at', 'path'],
  digest: (user) => ['event_key', 'event_type', user, 'remind_before_ms', 'window_start', 'occurred_at', 'path', 'items'],
};

/** The standard fields of an event of `kind` whose key field is `idField`, in their published order. */
export function standardFieldNames(spec: Pick<EventSpec, 'kind' | 'idField'>): string[] {
  return STANDARD[spec.kind](spec.idField);
}

/** Every top-level field of the event: the standard ones, then (but for a digest, whose declared fields are its items') the declared ones. */
export function eventFieldNames(spec: Pick<EventSpec, 'kind' | 'idField' | 'fields'>): string[] {
  return [...standardFieldNames(spec), ...(spec.kind === 'digest' ? [] : spec.fields.map((f) => f.name))];
}

/** A digest item's fields: the row id, its due time, the declared fields. */
export function digestItemFieldNames(spec: Pick<EventSpec, 'itemIdField' | 'fields'>): string[] {
  return [spec.itemIdField ?? 'id', 'due_at', ...spec.fields.map((f) => f.name)];
}

/** Event type → topic: the topology's topic for each event of the catalogue. */
export type EventTopics = Readonly<Record<string, string>>;

/**
 * The topic of every catalogue event, from the topology. Names every event without a topic at
 * once (a ConfigError): the relay must not start unable to publish one of them. A topology
 * entry that no entity emits is left alone (topics apply still creates its topic).
 */
export function eventTopics(catalogue: Pick<EntityCatalogue, 'events'>, topology: Pick<Topology, 'events'>): EventTopics {
  const topics: Record<string, string> = {};
  const missing: string[] = [];
  for (const spec of catalogue.events) {
    const declared = topology.events.find((e) => e.type === spec.type);
    if (declared === undefined) missing.push(spec.type);
    else topics[spec.type] = declared.topic;
  }
  if (missing.length > 0) {
    throw new ConfigError(`the topology declares no topic for ${missing.join(', ')}`, { problems: missing.map((type) => `events: no topic for ${type}`) });
  }
  return Object.freeze(topics);
}
