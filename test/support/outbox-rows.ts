/**
 * The events a pipeline (or a test's own batches) wrote, read back from event_outbox, each
 * decoded through the registry: its longs as decimal strings (exact past 2^53) and its
 * timestamps as epoch milliseconds.
 */
import type { Knex } from 'knex';
import type { EntityCatalogue } from '../../src/core/entity-catalogue';
import { createSchemaRegistry } from '../../src/publish/schema-registry';
import { config } from './stack';

/** entityType: the entity of the event's type in the catalogue. */
export type OutboxEvent = Readonly<{
  eventKey: string;
  eventType: string;
  entityType: string;
  entityId: string;
  topic: string;
  payload: Readonly<Record<string, unknown>>;
}>;

export type OutboxFilter = Readonly<{ entity?: string; ids?: ReadonlyArray<string | number | bigint>; keys?: readonly string[] }>;

const registry = createSchemaRegistry(config.registry);

export async function outboxEvents(db: Knex, catalogue: EntityCatalogue, filter: OutboxFilter = {}): Promise<OutboxEvent[]> {
  const narrow = narrowTo(catalogue, filter);
  const rows = (await narrow(db('event_outbox').select('event_key', 'event_type', 'entity_id', 'topic', 'payload').orderBy('id'))) as Array<{
    event_key: string;
    event_type: string;
    entity_id: string;
    topic: string;
    payload: Buffer;
  }>;
  const entityOf = new Map(catalogue.events.map((e) => [e.type, e.entity]));
  const out: OutboxEvent[] = [];
  for (const r of rows) {
    const value = (await registry.decode(r.payload)) as Record<string, unknown>;
    out.push({
      eventKey: r.event_key,
      eventType: r.event_type,
      entityType: entityOf.get(r.event_type)!,
      entityId: r.entity_id,
      topic: r.topic,
      payload: jsonForm(value),
    });
  }
  return out;
}

/** The event keys of `outboxEvents`, in write order. */
export async function outboxKeys(db: Knex, catalogue: EntityCatalogue, filter: OutboxFilter = {}): Promise<string[]> {
  return (await outboxEvents(db, catalogue, filter)).map((e) => e.eventKey);
}

function jsonForm(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]));
}

/** Rows and distinct event keys of `outboxEvents`, counted in the database (nothing decoded). */
export async function outboxCount(db: Knex, catalogue: EntityCatalogue, filter: OutboxFilter = {}): Promise<{ rows: number; keys: number }> {
  const narrow = narrowTo(catalogue, filter);
  const found = (await narrow(db('event_outbox').select('event_key'))) as Array<{ event_key: string }>;
  return { rows: found.length, keys: new Set(found.map((r) => r.event_key)).size };
}

/** A query narrowed to the filter, always to the catalogue's event types (never the capture probes). */
function narrowTo(catalogue: EntityCatalogue, filter: OutboxFilter): (q: Knex.QueryBuilder) => Knex.QueryBuilder {
  const types = catalogue.events.filter((e) => filter.entity === undefined || e.entity === filter.entity).map((e) => e.type);
  const ids = filter.ids?.map(String);
  return (q) => {
    q.whereIn('event_type', types);
    if (ids !== undefined) q.whereIn('entity_id', ids);
    if (filter.keys !== undefined) q.whereIn('event_key', [...filter.keys]);
    return q;
  };
}
