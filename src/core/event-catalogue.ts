/**
 * The events, as the outside world sees them, read from the entity catalogue: one EventSpec per
 * event type (catalogue.events, from the entities file), and the topic each is published to
 * (the topology's `events` list, or the default topic of its type: withEventTopics). The encoder
 * (schema, headers, key), the registry registration, the tests and the AsyncAPI document (docs/asyncapi.yaml, checked in make test) all read them
 * here, so an event type exists in one place: the entities file.
 *
 * Every event's fields, in order: the standard ones of its kind, then its declared fields:
 *   transition  event_key, event_type, <idField>, from_status, to_status, due_at, occurred_at, path
 *   reminder    event_key, event_type, <idField>, status, due_at, remind_before_ms, occurred_at, path
 *   digest      event_key, event_type, <idField: the user>, remind_before_ms, window_start,
 *               occurred_at, path, items, part, parts; each item <itemIdField>, due_at, then
 *               the declared fields (a digest's declared fields are its items')
 * A schema file must hold exactly these (in any order: the two original files interleave them);
 * a derived schema holds them in this order.
 */
import { ConfigError } from './errors';
import type { EntityCatalogue, EventKind, EventSpec } from './entity-catalogue';
import type { Topology } from './topology';

const STANDARD: Readonly<Record<EventKind, (idField: string) => string[]>> = {
  transition: (id) => ['event_key', 'event_type', id, 'from_status', 'to_status', 'due_at', 'occurred_at', 'path'],
  reminder: (id) => ['event_key', 'event_type', id, 'status', 'due_at', 'remind_before_ms', 'occurred_at', 'path'],
  digest: (user) => ['event_key', 'event_type', user, 'remind_before_ms', 'window_start', 'occurred_at', 'path', 'items', 'part', 'parts'],
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
 * once (a ConfigError): no process may start unable to publish one of them. A topology
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

const WEEK_MS = 7 * 24 * 3_600_000;

/** The topic of an event the topology does not name: `<prefix>.events.<type in lower case, _ as ->`. */
export function defaultEventTopic(topology: Pick<Topology, 'prefix'>, type: string): string {
  return `${topology.prefix}.events.${type.toLowerCase().replace(/_/g, '-')}`;
}

/**
 * The topology with a topic for every event of the catalogue: the ones it names, and for each
 * other one the default topic (defaultEventTopic) with `eventDefaults` (or the due lane's
 * partitions and 7 days). So an event added to the entities file needs no edit of every
 * topology. A default name taken by another topic of the topology is refused (a ConfigError).
 */
export function withEventTopics(topology: Topology, catalogue: Pick<EntityCatalogue, 'events'>): Topology {
  const named = new Set(topology.events.map((e) => e.type));
  const defaults = topology.eventDefaults ?? { partitions: topology.due.partitions, retentionMs: WEEK_MS };
  const added = catalogue.events
    .filter((spec) => !named.has(spec.type))
    .map((spec) => ({ type: spec.type, topic: defaultEventTopic(topology, spec.type), ...defaults }));
  if (added.length === 0) return topology;
  const taken = new Set(topology.events.map((e) => e.topic));
  const clashes = added.filter((e) => taken.has(e.topic));
  if (clashes.length > 0) {
    throw new ConfigError(`the topology names the default topic of ${clashes.map((e) => e.type).join(', ')} for another event`, {
      problems: clashes.map((e) => `events: '${e.topic}' is ${e.type}'s default topic but declared for another type; name ${e.type}'s topic`),
    });
  }
  return Object.freeze({ ...topology, events: Object.freeze([...topology.events, ...added.map((e) => Object.freeze(e))]) });
}

/** The entities whose derived event schemas (no schema file) have none of their tables read: none of their events can be encoded yet. */
export function derivedSchemasWaitingFor(catalogue: Pick<EntityCatalogue, 'events' | 'entities'>, tables: ReadonlyMap<string, unknown>): string[] {
  const derived = new Set(catalogue.events.filter((e) => e.schemaFile === null).map((e) => e.entity));
  return catalogue.entities.filter((e) => derived.has(e.name) && !e.locations.some((l) => tables.has(l.key))).map((e) => e.name);
}
