/**
 * Schema ids for the router's encoder (event-encoder.ts), without making the registry a
 * dependency of transitions.
 *
 * `timebucket schemas register` (a deployment step, like `migrate` and `topics apply`) registers
 * the schemas and saves their ids in event_schema_ids on the main database, keyed by registry,
 * subject and the schema text's SHA-256. `run` reads them and never calls the registry: a
 * registry that is down, read-only or refusing credentials holds nothing at run time. An event
 * type without a saved id holds its transitions until one is saved (back-pressure, counted in
 * timebucket_event_schema_ids_missing), never a second outbox. */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { EventTopics } from '../core/event-catalogue';
import { Backoffs } from '../runtime/retry-policy';
import { retryInBackground } from '../runtime/retry-in-background';
import { TimebucketError } from '../core/errors';
import type { Logger } from '../ops/logger';
import { createEventEncoder, type EventEncoder } from './event-encoder';
import { dataSchemaUri } from './event-headers';
import { createSchemaRegistry } from './schema-registry';
import { eventSchemas, registerEventSchemas, subjectFor, type EventTables, type SchemaIds } from './schemas';
import { readSchemaIdRows, upsertSchemaIdRows } from './sql/event-schema-ids';

export function schemaFingerprint(schemaText: string): string {
  return createHash('sha256').update(schemaText).digest('hex');
}

/** The registry as event_schema_ids names it: its base URL, credentials left out. */
function registryKey(registryUrl: string): string {
  return dataSchemaUri(registryUrl, 0).replace(/\/schemas\/ids\/0$/, '');
}

/** The saved id of each event's schema under its subject (`<topic>-value`), where there is one. */
export async function readSavedSchemaIds(db: Knex, registryUrl: string, topics: EventTopics, texts: Readonly<Record<string, string>>): Promise<SchemaIds> {
  const wanted = Object.entries(texts).flatMap(([type, text]) =>
    topics[type] === undefined ? [] : [{ type, subject: subjectFor(topics[type]!), fingerprint: schemaFingerprint(text) }],
  );
  const rows = await readSchemaIdRows(db, registryKey(registryUrl), wanted);
  const ids: Record<string, number> = {};
  for (const w of wanted) {
    const row = rows.find((r) => r.subject === w.subject && r.fingerprint === w.fingerprint);
    if (row !== undefined) ids[w.type] = row.schemaId;
  }
  return ids;
}

/** Each registered id saved under its registry, subject and schema fingerprint. */
export async function saveSchemaIds(
  db: Knex,
  registryUrl: string,
  topics: EventTopics,
  texts: Readonly<Record<string, string>>,
  ids: SchemaIds,
): Promise<void> {
  const rows = Object.entries(ids).flatMap(([type, schemaId]) =>
    texts[type] === undefined || topics[type] === undefined
      ? []
      : [{ subject: subjectFor(topics[type]!), fingerprint: schemaFingerprint(texts[type]!), eventType: type, schemaId }],
  );
  await upsertSchemaIdRows(db, registryKey(registryUrl), rows);
}

export type EventEncoding = Readonly<{ encoder: EventEncoder; stop: () => Promise<void> }>;

type EncodingContext = Readonly<{
  config: Pick<Config, 'registry'>;
  catalogue: EntityCatalogue;
  topics: EventTopics;
  tables?: EventTables;
  /** The main database: event_schema_ids lives there. */
  db: Knex;
  logger: Logger;
}>;

/**
 * `timebucket schemas register`: every event's schema registered under its subject (idempotent:
 * the same schema keeps its id) and the ids saved in event_schema_ids, where `run` reads them.
 */
export async function registerAndSaveSchemaIds(ctx: EncodingContext): Promise<SchemaIds> {
  const texts = eventSchemas(ctx.catalogue, ctx.tables);
  const ids = await registerEventSchemas(createSchemaRegistry(ctx.config.registry), ctx.catalogue, ctx.topics, {
    registry: ctx.config.registry,
    tables: ctx.tables,
  });
  await saveSchemaIds(ctx.db, ctx.config.registry.url, ctx.topics, texts, ids);
  return ids;
}

/**
 * The encoder of a process that runs transitions, from the saved ids alone: the registry is
 * never called. While an event type has no saved id (its schema not registered, or changed
 * since: the fingerprint differs), its transitions wait, and the ids are read again with backoff
 * until every type has one, so the process goes on by itself once the registration has run.
 */
export async function startEventEncoding(ctx: EncodingContext): Promise<EventEncoding> {
  const logger = ctx.logger.child({ component: 'event-encoding' });
  const texts = eventSchemas(ctx.catalogue, ctx.tables);
  const encoder = createEventEncoder({ catalogue: ctx.catalogue, topics: ctx.topics, schemaTexts: texts, registryUrl: ctx.config.registry.url });
  const readSaved = async () => encoder.setSchemaIds(await readSavedSchemaIds(ctx.db, ctx.config.registry.url, ctx.topics, texts));
  await readSaved();
  if (encoder.complete()) return { encoder, stop: async () => undefined };
  const unknown = () => ctx.catalogue.events.map((e) => e.type).filter((type) => !encoder.has(type));
  logger.warn(
    { eventTypes: unknown() },
    'no saved schema id for these events (`timebucket schemas register` has not run for these schemas): their transitions wait',
  );
  const background = retryInBackground(
    async () => {
      await readSaved();
      if (!encoder.complete()) throw new TimebucketError('SCHEMA_ID_MISSING', `no saved schema id for ${unknown().join(', ')} yet`, { retriable: true });
    },
    { what: 'reading the saved schema ids', backoff: Backoffs.registry, logger },
  );
  return { encoder, stop: background.stop };
}
