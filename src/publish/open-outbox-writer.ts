/**
 * The outbox writer of a process that runs transitions (the expirer, the scanner, `replay`)
 * (publish/outbox-writer.ts), with the event encoding started from the saved schema ids
 * (schema-id-source.ts), whose background re-read `stop` ends.
 */
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { eventTopics } from '../core/event-catalogue';
import type { Topology } from '../core/topology';
import type { Logger } from '../ops/logger';
import { eventOutboxWriter, type OutboxWriter, type RejectedEvent } from './outbox-writer';
import { startEventEncoding } from './schema-id-source';
import type { EventTables } from './schemas';

/** `missingSchemaIds`: event types that cannot be encoded yet (no saved schema id). */
export type OpenedOutboxWriter = Readonly<{ writer: OutboxWriter; missingSchemaIds: () => number; stop: () => Promise<void> }>;

export async function openOutboxWriter(
  ctx: Readonly<{
    config: Pick<Config, 'registry'>;
    catalogue: EntityCatalogue;
    topology: Topology;
    tables?: EventTables;
    /** The main database (event_schema_ids). */
    db: Knex;
    logger: Logger;
    /** Where events that can never be published go (the dead-letter topic); without it they fail the transaction. */
    rejected?: (events: readonly RejectedEvent[]) => Promise<void>;
  }>,
): Promise<OpenedOutboxWriter> {
  const encoding = await startEventEncoding({
    config: ctx.config,
    catalogue: ctx.catalogue,
    topics: eventTopics(ctx.catalogue, ctx.topology),
    tables: ctx.tables,
    db: ctx.db,
    logger: ctx.logger,
  });
  return { writer: eventOutboxWriter(encoding.encoder, { rejected: ctx.rejected }), missingSchemaIds: encoding.encoder.missing, stop: encoding.stop };
}
