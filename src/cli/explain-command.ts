/**
 * timebucket explain <entity> <id> [--database d] [--json]
 *
 * Why one row did or did not move (core/explain.ts): its status and due values by the database
 * clock, per transition whether an event of it is in event_outbox (when, how late, by which
 * path: the payload is decoded through the registry when it answers), and for a row still to
 * move, where its entry belongs (tier, topic, partition, bucket). Read-only: primary-key and
 * unique-index lookups (db/read-explained-row.ts).
 */
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config';
import { entityOf, type EntityCatalogue } from '../core/entity-catalogue';
import { explainTransition, parseEventKey, type OutboxFact, type TransitionExplanation } from '../core/explain';
import type { Topology } from '../core/topology';
import { formatUtc } from '../core/utc-time';
import { openDatabases } from '../db/databases';
import { readExplainedRow, readOutboxRowsOf } from '../db/read-explained-row';
import { readDbNow } from '../expire/sql/read-db-now';
import { loadEntities } from '../ops/load-entities';
import { loadTopology } from '../ops/load-topology';
import { createSchemaRegistry } from '../publish/schema-registry';
import { needsOf } from './command-needs';

export type RowExplanation = Readonly<{ entity: string; id: string; found: false; searched: string[] } | { entity: string; id: string; found: true; database: string; table: string; dbNowMs: number; transitions: TransitionExplanation[] }>;

/** The path an event's payload names, or null when it cannot be decoded (the registry away). */
export type PathOf = (payload: Buffer) => Promise<string | null>;

export async function explainRow(config: Config, topology: Topology, catalogue: EntityCatalogue, entityName: string, id: string, opts: { database?: string; pathOf?: PathOf } = {}): Promise<RowExplanation> {
  const entity = entityOf(catalogue, entityName);
  const databases = entity.databases.filter((d) => opts.database === undefined || d === opts.database);
  const pools = openDatabases(config, catalogue);
  try {
    for (const database of databases) {
      const db = pools.pools[database]!;
      const row = await readExplainedRow(db, entity, entity.locations.filter((l) => l.database === database), id);
      if (row === undefined) continue;
      const dbNowMs = await readDbNow(db);
      const transitions: TransitionExplanation[] = [];
      for (const t of entity.transitions) {
        const outbox: OutboxFact[] = [];
        for (const r of await readOutboxRowsOf(db, t, id)) {
          const times = parseEventKey(t, id, r.eventKey);
          if (times !== undefined) outbox.push({ eventKey: r.eventKey, topic: r.topic, createdAtMs: r.createdAtMs, ...times, path: (await opts.pathOf?.(r.payload)) ?? null });
        }
        transitions.push(explainTransition(topology, entity, t, { id, at: row.location.key, status: row.status, dueMs: row.dueMs }, outbox, dbNowMs, formatUtc));
      }
      return { entity: entity.name, id, found: true, database, table: row.location.table, dbNowMs, transitions };
    }
    return { entity: entity.name, id, found: false, searched: entity.locations.filter((l) => databases.includes(l.database)).map((l) => l.key) };
  } finally {
    await pools.destroy();
  }
}

export function explanationLines(e: RowExplanation): string[] {
  if (!e.found) return [`${e.entity} ${e.id}: no such row in ${e.searched.join(', ')}`];
  const lines = [`${e.entity} ${e.id} in ${e.database}.${e.table}, database clock ${formatUtc(e.dbNowMs)}`];
  for (const t of e.transitions) {
    const due = t.dueMs === null ? 'no due time' : `due ${formatUtc(t.dueMs)}`;
    lines.push(`  ${t.transition} (status ${String(t.status)}, ${due}): ${t.verdict}`);
  }
  return lines;
}

export function registerExplainCommand(program: Command): void {
  program
    .command('explain')
    .description('why one row did or did not move: its state by the database clock, its events, where its entry belongs')
    .argument('<entity>', "the entity's name in the entities file")
    .argument('<id>', "the row's id (decimal)")
    .option('--database <name>', 'only this database of a spread entity')
    .option('--json', 'print the explanation as one JSON object')
    .action(async (entity: string, id: string, opts: { database?: string; json?: boolean }, command: Command) => {
      if (!/^[0-9]{1,20}$/.test(id)) command.error(`error: the id must be a decimal integer (is ${JSON.stringify(id)})`, { exitCode: 64 });
      const config = loadConfig(process.env, { uses: needsOf(['explain']) });
      const catalogue = loadEntities(config.entitiesPath);
      if (!catalogue.entities.some((e) => e.name === entity)) command.error(`error: no entity '${entity}' (entities: ${catalogue.entities.map((e) => e.name).join(', ')})`, { exitCode: 64 });
      const registry = createSchemaRegistry(config.registry);
      const pathOf: PathOf = async (payload) => {
        const value = (await registry.decode(payload).catch(() => undefined)) as { path?: unknown } | undefined;
        return typeof value?.path === 'string' ? value.path : null;
      };
      const explanation = await explainRow(config, loadTopology(config.topologyPath, catalogue), catalogue, entity, id, { database: opts.database, pathOf });
      if (opts.json === true) console.log(JSON.stringify(explanation));
      else for (const line of explanationLines(explanation)) console.log(line);
      if (!explanation.found) process.exitCode = 1;
    });
}
