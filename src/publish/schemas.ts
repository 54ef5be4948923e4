/**
 * The Avro schemas of the events other teams consume, and their registration.
 *
 * An event's schema is its schema file under schemas/ when the entities file names one (checked
 * to hold exactly the event's fields), else derived from its table's columns (derived-schema.ts).
 *
 * Contract (docs/architecture.md, "Events for other teams"): subject `<topic>-value`, compatibility
 * BACKWARD, so a consumer upgraded to the newest schema can still read every older event.
 *
 * Registration is idempotent: registering the same schema again returns the same id. The
 * compatibility level is set BEFORE the first registration (the Confluent API and Apicurio's
 * ccompat API both accept PUT /config/<subject> for a subject that has no versions yet), so a
 * subject never exists under the registry-wide default (Apicurio's is NONE), and it is set
 * again on every run, which repairs a subject whose first registration was interrupted.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { entityOf, type Entity, type EntityCatalogue, type EventSpec } from '../core/entity-catalogue';
import type { EventTopics } from '../core/event-catalogue';
import { packageRoot } from '../ops/package-root';
import { ConfigError, TimebucketError } from '../core/errors';
import type { Config } from '../config';
import { deriveEventSchema, type DerivableColumns } from './derived-schema';
import { schemaFileProblems } from './schema-file-check';
import { registryAuthHeaders } from './schema-registry';
import { retry } from '../runtime/retry';
import { RetryPolicies } from '../runtime/retry-policy';

const schemasDir = resolve(packageRoot(__dirname), 'schemas');

/** Bounded wait for one registry call: a hung registry must fail start-up, not stall it. */
const registryTimeoutMs = 10_000;

/** What a derived schema is made from: the emitting entity and its table's columns. */
export type SchemaDerivation = Readonly<{ entity: Entity; columns: DerivableColumns }>;

/**
 * Tables by name with their columns, as read from information_schema at start (a SchemaInfo
 * from core/column-info.ts is one). Needed only for events without a schema file.
 */
/** The mapped tables by location key (`<database>.<table>`). */
export type EventTables = ReadonlyMap<string, Readonly<{ columns: DerivableColumns }>>;

/**
 * The schema text of an event: its schema file exactly as in schemas/ (parsed and re-stringified,
 * so a typo fails early), checked against the event's fields; or, without a schema file, the
 * record derived from `derivation` (derived-schema.ts). Throws a ConfigError naming what is wrong.
 */
export function loadEventSchema(spec: EventSpec, derivation?: SchemaDerivation): string {
  if (spec.schemaFile === null) {
    if (derivation === undefined) {
      const problem = `${spec.type}: no schema file, and no table columns to derive its schema from`;
      throw new ConfigError(problem, { problems: [problem] });
    }
    return JSON.stringify(deriveEventSchema(spec, derivation.entity, derivation.columns));
  }
  const path = resolve(schemasDir, spec.schemaFile);
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const problem = `${spec.schemaFile} (${spec.type}): ${err instanceof Error ? err.message : String(err)}`;
    throw new ConfigError(`cannot read the schema of ${spec.type}: ${problem}`, { problems: [problem] });
  }
  const problems = schemaFileProblems(spec, schema);
  if (problems.length > 0) throw new ConfigError(`schema file ${spec.schemaFile} does not fit ${spec.type}: ${problems.join('; ')}`, { problems });
  return JSON.stringify(schema);
}

/**
 * The schema text of every catalogue event, by event type, or one ConfigError naming every
 * problem of every event: start-up fails before it registers anything.
 */
export function eventSchemas(catalogue: EntityCatalogue, tables?: EventTables): Readonly<Record<string, string>> {
  const texts: Record<string, string> = {};
  const problems: string[] = [];
  for (const spec of catalogue.events) {
    const entity = entityOf(catalogue, spec.entity);
    // Keyed by location (db/check-entity-schema.ts); a table set's tables share their columns,
    // so any one read will do (a database that did not answer at start has none read yet).
    const columns = entity.locations.map((l) => tables?.get(l.key)?.columns).find((c) => c !== undefined);
    if (spec.schemaFile === null && columns === undefined) {
      problems.push(`${spec.type}: no schema file, and no columns of table ${entity.table} to derive its schema from`);
      continue;
    }
    try {
      texts[spec.type] = loadEventSchema(spec, columns === undefined ? undefined : { entity, columns });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...(err.details['problems'] as string[]));
    }
  }
  if (problems.length > 0) throw new ConfigError(`invalid event schemas: ${problems.join('; ')}`, { problems });
  return Object.freeze(texts);
}

export function subjectFor(topic: string): string {
  return `${topic}-value`;
}

/** The registry's schema id per event type. */
export type SchemaIds = Readonly<Record<string, number>>;

export type RegisterOptions = Readonly<{
  /** The registry's Confluent-compatible base URL and basic auth (config.registry): csr has no config call. */
  registry: Config['registry'];
  fetchFn?: typeof fetch;
}>;

/**
 * Registers the schema of every catalogue event under `<topic>-value` with BACKWARD
 * compatibility, `topics` being eventTopics(catalogue, topology). Output: the schema id per
 * event type, for the event encoder (saved by `timebucket schemas register`). Safe to re-run (same schema, same id; a derived schema is
 * deterministic). Every schema is loaded and checked before the first registry call; rejects
 * with the registry's error when a schema is incompatible with what is registered.
 */
export async function registerEventSchemas(
  registry: SchemaRegistry,
  catalogue: EntityCatalogue,
  topics: EventTopics,
  opts: RegisterOptions & Readonly<{ tables?: EventTables }>,
): Promise<SchemaIds> {
  const texts = eventSchemas(catalogue, opts.tables);
  const missing = catalogue.events.filter((e) => topics[e.type] === undefined).map((e) => e.type);
  if (missing.length > 0) throw new ConfigError(`no topic for ${missing.join(', ')}`, { problems: missing.map((type) => `events: no topic for ${type}`) });
  const ids: Record<string, number> = {};
  for (const spec of catalogue.events) {
    const subject = subjectFor(topics[spec.type]!);
    await setSubjectCompatibility(opts, subject, COMPATIBILITY.BACKWARD);
    // csr checks the subject's level against this one before registering, and fails on a mismatch.
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: texts[spec.type]! }, { subject, compatibility: COMPATIBILITY.BACKWARD });
    ids[spec.type] = id;
  }
  return Object.freeze(ids);
}

/**
 * PUT /config/<subject>. The level must be upper case: Apicurio answers 500 to `backward`.
 *
 * Replicas starting together set the same new subject's level at once, and the registry creates
 * the subject's rule for one of them and answers another 409 ("already exists"). The rule then
 * exists, so the same PUT again updates it: it is repeated, a few times at most.
 */
export async function setSubjectCompatibility(opts: RegisterOptions, subject: string, level: COMPATIBILITY): Promise<void> {
  let conflict = false;
  const once = async (attempt: number): Promise<void> => {
    conflict = false;
    const res = await putSubjectCompatibility(opts, subject, level);
    conflict = res.status === CONFLICT;
    const repeat = conflict && attempt < RetryPolicies.subjectConflict.retriableAttempts;
    if (res.ok || repeat) await res.body?.cancel();
    if (res.ok) return;
    const body = repeat ? '' : await res.text().catch(() => '');
    throw new TimebucketError('REGISTRY_UNAVAILABLE', `setting ${subject} to ${level} failed with HTTP ${res.status}`, {
      // A conflict that outlasted the repeats is still another writer's: worth a later try.
      retriable: res.status >= 500 || conflict,
      details: { subject, status: res.status, body: body.slice(0, 500) },
    });
  };
  // Only a conflict is repeated here, unlogged; any other failure is the caller's to retry.
  await retry(once, { policy: RetryPolicies.subjectConflict, what: `setting ${subject} to ${level}`, log: () => undefined, keepGoing: () => conflict });
}

const CONFLICT = 409;

/** One PUT, its answer whatever the status; rejects only when the registry cannot be reached. */
async function putSubjectCompatibility(opts: RegisterOptions, subject: string, level: COMPATIBILITY): Promise<Response> {
  const url = `${opts.registry.url.replace(/\/+$/, '')}/config/${encodeURIComponent(subject)}`;
  try {
    return await (opts.fetchFn ?? fetch)(url, {
      method: 'PUT',
      headers: {
        'Content-Type': 'application/vnd.schemaregistry.v1+json',
        Accept: 'application/vnd.schemaregistry.v1+json',
        ...registryAuthHeaders(opts.registry.auth),
      },
      body: JSON.stringify({ compatibility: level }),
      signal: AbortSignal.timeout(registryTimeoutMs),
    });
  } catch (cause) {
    throw new TimebucketError('REGISTRY_UNAVAILABLE', `cannot reach the schema registry at ${opts.registry.url}`, {
      retriable: true,
      cause,
      details: { subject },
    });
  }
}
