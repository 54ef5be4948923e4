/**
 * The event writer a transition needs (publish/outbox-writer.ts), for tests that run batches
 * themselves: events encoded into event_outbox exactly as the expirer writes them, their schemas
 * registered first (as `timebucket schemas register` does) under topics of a prefix of the
 * call's own, so a test catalogue's schemas never meet another test's under one subject. The
 * tests' own databases have no outbox connector: the rows stay where the test reads them
 * (outboxEvents in outbox-rows.ts decodes them).
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { EntityCatalogue } from '../../src/core/entity-catalogue';
import { defaultEventTopic } from '../../src/core/event-catalogue';
import { readEntitySchema } from '../../src/db/check-entity-schema';
import { eventOutboxWriter, type OutboxWriter, type RejectedEvent } from '../../src/publish/outbox-writer';
import { createEventEncoder } from '../../src/publish/event-encoder';
import { createSchemaRegistry } from '../../src/publish/schema-registry';
import { eventSchemas, registerEventSchemas } from '../../src/publish/schemas';
import { config } from './stack';

export type EventWriterOptions = Readonly<{
  /** The topics' prefix (default: a fresh one). */
  prefix?: string;
  /** Where events that can never be published go; without it they fail the transaction. */
  rejected?: (events: readonly RejectedEvent[]) => Promise<void>;
}>;

/** `pools`: the database the catalogue's tables live on, or a pool per database it names. */
export async function eventWriter(
  pools: Knex | Readonly<Record<string, Knex>>,
  catalogue: EntityCatalogue,
  opts: EventWriterOptions = {},
): Promise<OutboxWriter> {
  const byDatabase = typeof pools === 'function' ? { main: pools } : pools;
  const tables = await readEntitySchema(byDatabase, catalogue);
  const prefix = opts.prefix ?? `tbtest-${randomBytes(4).toString('hex')}`;
  const topics = Object.fromEntries(catalogue.events.map((e) => [e.type, defaultEventTopic({ prefix }, e.type)]));
  const ids = await registerEventSchemas(createSchemaRegistry(config.registry), catalogue, topics, { registry: config.registry, tables });
  const encoder = createEventEncoder({ catalogue, topics, schemaTexts: eventSchemas(catalogue, tables), registryUrl: config.registry.url });
  encoder.setSchemaIds(ids);
  return eventOutboxWriter(encoder, { rejected: opts.rejected });
}
