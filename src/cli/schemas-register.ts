/**
 * `timebucket schemas register`: the deployment step that gives `run` its schema ids (run as a
 * Job, like `migrate` and `topics apply`, before the processes start or roll). Registers every
 * event's Avro schema under `<topic>-value` with BACKWARD compatibility (publish/schemas.ts) and
 * saves the ids in event_schema_ids on the main database, where the processes that run
 * transitions read them: they never call the registry. Idempotent: the same schema keeps its
 * id. A registry that cannot be reached is retried a few times, then the command fails (exit 1)
 * for the Job to be retried; a schema that does not fit its event, or that the registry refuses
 * as incompatible, fails at once, named.
 */
import type { Config } from '../config';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { eventTopics } from '../core/event-catalogue';
import { RetryPolicies } from '../runtime/retry-policy';
import type { Topology } from '../core/topology';
import { readEntitySchema } from '../db/check-entity-schema';
import { openDatabases } from '../db/databases';
import type { Logger } from '../ops/logger';
import { retry } from '../runtime/retry';
import { registerAndSaveSchemaIds } from '../publish/schema-id-source';
import { subjectFor } from '../publish/schemas';

export type RegisteredSchema = Readonly<{ eventType: string; subject: string; id: number }>;

export async function schemasRegister(
  config: Config,
  topology: Topology,
  catalogue: EntityCatalogue,
  logger: Logger,
  print: (line: string) => void = console.log,
): Promise<RegisteredSchema[]> {
  const databases = openDatabases(config, catalogue, logger);
  try {
    // Events without a schema file have theirs derived from their table's columns.
    const tables = await readEntitySchema(databases.pools, catalogue);
    const topics = eventTopics(catalogue, topology);
    const ids = await retry(() => registerAndSaveSchemaIds({ config, catalogue, topics, tables, db: databases.main, logger }), {
      policy: RetryPolicies.registration,
      what: 'registering the event schemas',
      logger,
    });
    const registered = catalogue.events.map((e) => ({ eventType: e.type, subject: subjectFor(topics[e.type]!), id: ids[e.type]! }));
    for (const r of registered) print(`${r.eventType}: ${r.subject} id ${r.id}`);
    print(`schemas: ${registered.length} registered, ids saved in event_schema_ids`);
    return registered;
  } finally {
    await databases.destroy();
  }
}
