/** Reads and validates the topology file named by the configuration. */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../core/errors';
import { parseTopology, Topology } from '../core/topology';

export function loadTopology(path: string): Topology {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read topology ${path}: ${err instanceof Error ? err.message : String(err)}`, { problems: ['TB_TOPOLOGY'] });
  }
  return parseTopology(json, path);
}
