/**
 * The events a pipeline wrote, read back from the database whichever way it publishes
 * (TB_PUBLISH_MODE): the router's event_outbox, and the relay's JSON outbox (which router mode
 * also writes when an event cannot be encoded yet). Each event as its JSON payload reads: an
 * event_outbox value is decoded through the registry, its longs as decimal strings (the JSON
 * payload's form for ids) and its timestamps as epoch milliseconds.
 */
import type { Knex } from 'knex';
import type { EntityCatalogue } from '../../src/core/entity-catalogue';
import { createSchemaRegistry } from '../../src/publish/schema-registry';
import { config } from './stack';

export type OutboxEvent = Readonly<{ eventKey: string; eventType: string; entityId: string; payload: Readonly<Record<string, unknown>> }>;

export type OutboxFilter = Readonly<{ entity?: string; ids?: ReadonlyArray<string | number | bigint>; keys?: readonly string[] }>;

const registry = createSchemaRegistry(config.registry);

export async function outboxEvents(db: Knex, catalogue: EntityCatalogue, filter: OutboxFilter = {}): Promise<OutboxEvent[]> {
  const narrow = narrowTo(catalogue, filter);
  const relayed = (await narrow(db('outbox').select('event_key', 'event_type', db.raw('CAST(entity_id AS CHAR) AS entity_id'), 'payload').orderBy('id'))) as Array<{ event_key: string; event_type: string; entity_id: string; payload: string }>;
  const routed = (await narrow(db('event_outbox').select('event_key', 'event_type', 'entity_id', 'payload').orderBy('id'))) as Array<{ event_key: string; event_type: string; entity_id: string; payload: Buffer }>;
  const out: OutboxEvent[] = relayed.map((r) => ({ eventKey: r.event_key, eventType: r.event_type, entityId: r.entity_id, payload: JSON.parse(r.payload) as Record<string, unknown> }));
  for (const r of routed) {
    const value = (await registry.decode(r.payload)) as Record<string, unknown>;
    out.push({ eventKey: r.event_key, eventType: r.event_type, entityId: r.entity_id, payload: jsonForm(value) });
  }
  return out;
}

/** The event keys of `outboxEvents`, in write order per table. */
export async function outboxKeys(db: Knex, catalogue: EntityCatalogue, filter: OutboxFilter = {}): Promise<string[]> {
  return (await outboxEvents(db, catalogue, filter)).map((e) => e.eventKey);
}

function jsonForm(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]));
}

/** Rows and distinct event keys of `outboxEvents`, counted in the database (nothing decoded). */
export async function outboxCount(db: Knex, catalogue: EntityCatalogue, filter: OutboxFilter = {}): Promise<{ rows: number; keys: number }> {
  const narrow = narrowTo(catalogue, filter);
  const keys = new Set<string>();
  let rows = 0;
  for (const table of ['outbox', 'event_outbox']) {
    const found = (await narrow(db(table).select('event_key'))) as Array<{ event_key: string }>;
    rows += found.length;
    for (const r of found) keys.add(r.event_key);
  }
  return { rows, keys: keys.size };
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
