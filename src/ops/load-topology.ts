/**
 * Reads and validates the topology file named by the configuration, with a topic for every
 * event of the catalogue (the default one for each the file does not name: withEventTopics).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../core/errors';
import { parseTopology, Topology } from '../core/topology';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { withEventTopics } from '../core/event-catalogue';

export function loadTopology(path: string, catalogue: Pick<EntityCatalogue, 'events'>): Topology {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read topology ${path}: ${err instanceof Error ? err.message : String(err)}`, { problems: ['TB_TOPOLOGY'] });
  }
  return withEventTopics(parseTopology(json, path), catalogue);
}
