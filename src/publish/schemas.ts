/**
 * The Avro schemas of the events other teams consume, and their registration.
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
import { EventCatalogue } from '../core/event-catalogue';
import { packageRoot } from '../core/package-root';
import { EventType, EventTypes } from '../core/events';
import { TimebucketError } from '../core/errors';
import type { Config } from '../config';
import { registryAuthHeaders } from './schema-registry';

const schemasDir = resolve(packageRoot(__dirname), 'schemas');

/** Bounded wait for one registry call: a hung registry must fail start-up, not stall it. */
const registryTimeoutMs = 10_000;

/** The schema text of an event type, exactly as in schemas/*.avsc (parsed, so a typo fails early). */
export function loadEventSchema(type: EventType): string {
  const text = readFileSync(resolve(schemasDir, EventCatalogue[type].schemaFile), 'utf8');
  return JSON.stringify(JSON.parse(text));
}

export function subjectFor(topic: string): string {
  return `${topic}-value`;
}

export type SchemaIds = Readonly<Record<EventType, number>>;

export type RegisterOptions = Readonly<{
  /** The registry's Confluent-compatible base URL and basic auth (config.registry): csr has no config call. */
  registry: Config['registry'];
  fetchFn?: typeof fetch;
}>;

/**
 * Registers every event schema under `<topic>-value` with BACKWARD compatibility. Output: the
 * schema id per event type, for the relay's encoder. Safe to re-run (same schema, same id).
 * Rejects with the registry's error when a schema is incompatible with what is registered.
 */
export async function registerEventSchemas(
  registry: SchemaRegistry,
  topicsByType: Readonly<Record<EventType, string>>,
  opts: RegisterOptions,
): Promise<SchemaIds> {
  const ids = {} as Record<EventType, number>;
  for (const type of EventTypes) {
    const subject = subjectFor(topicsByType[type]);
    await setSubjectCompatibility(opts, subject, COMPATIBILITY.BACKWARD);
    // csr checks the subject's level against this one before registering, and fails on a mismatch.
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: loadEventSchema(type) },
      { subject, compatibility: COMPATIBILITY.BACKWARD },
    );
    ids[type] = id;
  }
  return Object.freeze(ids);
}

/** PUT /config/<subject>. The level must be upper case: Apicurio answers 500 to `backward`. */
export async function setSubjectCompatibility(opts: RegisterOptions, subject: string, level: COMPATIBILITY): Promise<void> {
  const url = `${opts.registry.url.replace(/\/+$/, '')}/config/${encodeURIComponent(subject)}`;
  let res: Response;
  try {
    res = await (opts.fetchFn ?? fetch)(url, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json', Accept: 'application/vnd.schemaregistry.v1+json', ...registryAuthHeaders(opts.registry.auth) },
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
  if (!res.ok) {
    const body = await res.text().catch(() => '');
    throw new TimebucketError('REGISTRY_UNAVAILABLE', `setting ${subject} to ${level} failed with HTTP ${res.status}`, {
      retriable: res.status >= 500,
      details: { subject, status: res.status, body: body.slice(0, 500) },
    });
  }
}
