/**
 * What a deployment's `timebucket schemas register` Job does before the processes start: the
 * event schemas registered and their ids saved in the main database of `env` (a contender's own
 * database, or the captured one), where its processes read them. Without it their transitions
 * would wait for the ids.
 */
import { schemasRegister } from '../../src/cli/schemas-register';
import { loadConfig } from '../../src/config';
import type { Topology } from '../../src/core/topology';
import { loadEntities } from '../../src/ops/load-entities';
import { loadTopology } from '../../src/ops/load-topology';
import { createLogger } from '../../src/ops/logger';

export async function registerSchemas(env: NodeJS.ProcessEnv, topology?: Topology): Promise<void> {
  const config = loadConfig(env);
  const catalogue = loadEntities(config.entitiesPath);
  await schemasRegister(config, topology ?? loadTopology(config.topologyPath, catalogue), catalogue, createLogger('warn'), () => undefined);
}
