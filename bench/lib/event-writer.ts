/**
 * The event writer of a bench process that runs transitions itself (the raw and poller
 * contenders): the expirer's own, events encoded into event_outbox with the schema ids that
 * `schemas register` saved (registered here first, as a deployment's Job would), the same
 * statements the stream runs. The contenders' databases have no outbox connector, so nothing
 * publishes these rows: they are counted in the table.
 */
import type { Config } from '../../src/config';
import type { Db } from '../../src/db/knex';
import type { EntityCatalogue } from '../../src/core/entity-catalogue';
import type { OutboxWriter } from '../../src/publish/outbox-writer';
import { readEntitySchema } from '../../src/db/check-entity-schema';
import { loadTopology } from '../../src/ops/load-topology';
import { createLogger } from '../../src/ops/logger';
import { openOutboxWriter } from '../../src/publish/open-outbox-writer';
import { registerSchemas } from './register-schemas';

export async function openBenchEventWriter(config: Config, db: Db, catalogue: EntityCatalogue): Promise<OutboxWriter> {
  const tables = await readEntitySchema({ main: db }, catalogue);
  const topology = loadTopology(config.topologyPath, catalogue);
  await registerSchemas(process.env, topology);
  const outbox = await openOutboxWriter({ config, catalogue, topology, tables, db, logger: createLogger('warn') });
  return outbox.writer;
}
