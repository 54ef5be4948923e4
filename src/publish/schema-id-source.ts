/**
 * Schema ids for the router's encoder (event-encoder.ts), without making the registry a
 * start-up dependency of transitions.
 *
 * At start: the ids saved by the last successful registration (event_schema_ids, on the main
 * database, keyed by registry, subject and the schema text's SHA-256) are handed to the
 * encoder, then the schemas are registered (idempotent: the same schema gets the same id) and
 * the ids saved again. When the registry cannot be reached, or refuses the registration (a
 * read-only registry), the registration is retried in the background with backoff; meanwhile
 * the event types with a saved id are encoded, and the others go to the relay's JSON outbox
 * (expire/outbox-writer.ts). Only a schema that does not fit its event stops start-up, named:
 * a registry that is down, read-only or refusing our credentials holds publishing, never the
 * transitions, and its error is logged and counted on every attempt.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { EventTopics } from '../core/event-catalogue';
import { Backoffs } from '../core/retry-policy';
import { retryInBackground } from '../ops/retry-in-background';
import { ConfigError } from '../core/errors';
import type { Logger } from '../ops/logger';
import { createEventEncoder, type EventEncoder } from './event-encoder';
import { dataSchemaUri } from './event-headers';
import { createSchemaRegistry } from './schema-registry';
import { eventSchemas, registerEventSchemas, subjectFor, type EventTables, type SchemaIds } from './schemas';


export function schemaFingerprint(schemaText: string): string {
  return createHash('sha256').update(schemaText).digest('hex');
}

/** The registry as event_schema_ids names it: its base URL, credentials left out. */
function registryKey(registryUrl: string): string {
  return dataSchemaUri(registryUrl, 0).replace(/\/schemas\/ids\/0$/, '');
}

/** The saved id of each event's schema under its subject (`<topic>-value`), where there is one. */
export async function readSavedSchemaIds(db: Knex, registryUrl: string, topics: EventTopics, texts: Readonly<Record<string, string>>): Promise<SchemaIds> {
  const wanted = Object.entries(texts).flatMap(([type, text]) => (topics[type] === undefined ? [] : [{ type, subject: subjectFor(topics[type]!), fingerprint: schemaFingerprint(text) }]));
  if (wanted.length === 0) return {};
  const [rows] = (await db.raw(
    `SELECT subject, fingerprint, schema_id FROM event_schema_ids WHERE registry = ? AND (subject, fingerprint) IN (${wanted.map(() => '(?, ?)').join(', ')})`,
    [registryKey(registryUrl), ...wanted.flatMap((w) => [w.subject, w.fingerprint])],
  )) as [Array<{ subject: string; fingerprint: string; schema_id: number }>];
  const ids: Record<string, number> = {};
  for (const w of wanted) {
    const row = rows.find((r) => r.subject === w.subject && r.fingerprint === w.fingerprint);
    if (row !== undefined) ids[w.type] = Number(row.schema_id);
  }
  return ids;
}

/** Upsert (VALUES() reads the same on MySQL 8 and MariaDB). */
export async function saveSchemaIds(db: Knex, registryUrl: string, topics: EventTopics, texts: Readonly<Record<string, string>>, ids: SchemaIds): Promise<void> {
  const rows = Object.entries(ids).filter(([type]) => texts[type] !== undefined && topics[type] !== undefined);
  if (rows.length === 0) return;
  await db.raw(
    `INSERT INTO event_schema_ids (registry, subject, fingerprint, event_type, schema_id) VALUES ${rows.map(() => '(?, ?, ?, ?, ?)').join(', ')}
     ON DUPLICATE KEY UPDATE schema_id = VALUES(schema_id), event_type = VALUES(event_type), registered_at = CURRENT_TIMESTAMP(3)`,
    rows.flatMap(([type, id]) => [registryKey(registryUrl), subjectFor(topics[type]!), schemaFingerprint(texts[type]!), type, id]),
  );
}

export type EventEncoding = Readonly<{ encoder: EventEncoder; stop: () => Promise<void> }>;

export async function startEventEncoding(ctx: Readonly<{
  config: Pick<Config, 'registry'>;
  catalogue: EntityCatalogue;
  topics: EventTopics;
  tables?: EventTables;
  /** The main database: event_schema_ids lives there. */
  db: Knex;
  logger: Logger;
  /** Told of every failed registration attempt (metrics). */
  onFailure?: () => void;
}>): Promise<EventEncoding> {
  const logger = ctx.logger.child({ component: 'event-encoding' });
  const texts = eventSchemas(ctx.catalogue, ctx.tables);
  const encoder = createEventEncoder({ catalogue: ctx.catalogue, topics: ctx.topics, schemaTexts: texts, registryUrl: ctx.config.registry.url });
  encoder.setSchemaIds(await readSavedSchemaIds(ctx.db, ctx.config.registry.url, ctx.topics, texts));
  const registry = createSchemaRegistry(ctx.config.registry);
  const register = async () => {
    const ids = await registerEventSchemas(registry, ctx.catalogue, ctx.topics, { registry: ctx.config.registry, tables: ctx.tables });
    await saveSchemaIds(ctx.db, ctx.config.registry.url, ctx.topics, texts, ids);
    encoder.setSchemaIds(ids);
  };
  try {
    await register();
    return { encoder, stop: async () => undefined };
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    ctx.onFailure?.();
    logger.warn({ err, savedIdsComplete: encoder.complete() }, 'schema registration failed: retried in the background; events without a schema id wait in the relay outbox');
  }
  const background = retryInBackground(register, { what: 'event schema registration', backoff: Backoffs.registry, logger, onFailure: ctx.onFailure });
  return { encoder, stop: background.stop };
}
