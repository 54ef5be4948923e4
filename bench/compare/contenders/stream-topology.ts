/**
 * The stream contender's topology: topics/local.json (the rings `make run` uses)
 * under a prefix of the run's own, with event topics of its own, so nothing of
 * another pipeline is read or written. `shards` 16 for mixed, as topics/production.json;
 * MIXED_PARTITIONS also gives its minute ring and due lane that many partitions (production: 16).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTopology, Topology, TopologyJson } from '../../../src/core/topology';
import { topicsDir } from '../../lib/paths';
import { defaultEventTopic } from '../../../src/core/event-catalogue';

export type StreamTopology = Readonly<{ topology: Topology; path: string }>;

export function writeStreamTopology(prefix: string, opts: { shards?: number; partitions?: number }): StreamTopology {
  const raw = JSON.parse(readFileSync(join(topicsDir, 'local.json'), 'utf8')) as TopologyJson & { tiers: Array<{ partitions: number }> };
  raw.prefix = prefix;
  raw.events = (raw.events ?? []).map((e) => ({ ...e, topic: defaultEventTopic({ prefix }, e.type) }));
  if (opts.shards !== undefined) raw.shards = opts.shards;
  if (opts.partitions !== undefined) {
    raw.tiers[0]!.partitions = opts.partitions;
    raw.due = { partitions: opts.partitions };
  }
  const topology = parseTopology(raw, 'bench topology');
  const path = join(tmpdir(), `${prefix}.json`);
  writeFileSync(path, JSON.stringify(raw));
  return { topology, path };
}
