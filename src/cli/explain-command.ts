/**
 * timebucket explain <entity> <id> [--database d] [--json]
 *
 * Why one row did or did not move (core/explain.ts): its status and due values by the database
 * clock, per transition whether an event of it is in event_outbox (when, how late, by which
 * path: the payload is decoded through the registry when it answers), and for a row still to
 * move, where its entry belongs (tier, topic, partition, bucket). Read-only: primary-key and
 * unique-index lookups (db/sql/read-explained-row.ts). Unless --no-wire, it then looks on Kafka
 * (cli/explain-wire.ts): for the entry of a scheduled row, for the event of a transitioned one.
 */
import type { Command } from 'commander';
import type { Config } from '../config';
import { entityOf, type Entity, type EntityCatalogue, type Transition } from '../core/entity-catalogue';
import { explainTransition, latestEvent, parseEventKey, withWire, type OutboxFact, type TransitionExplanation, type WireFacts } from '../core/explain';
import type { Topology } from '../core/topology';
import { formatUtc } from '../core/utc-time';
import { openDatabases } from '../db/databases';
import { readExplainedRow, readOutboxRowsOf } from '../db/sql/read-explained-row';
import { readDbNow } from '../db/sql/read-db-now';
import { createSchemaRegistry } from '../publish/schema-registry';
import { createKafka } from '../kafka/client';
import { systemClock } from '../core/clock';
import type { Setup, SetupCommand } from './command-setup';
import { interruptible } from './interrupt';
import { InterruptedError } from '../core/errors';
import { wireLook, type WireLook } from './explain-wire';

export type RowExplanation = Readonly<
  | { entity: string; id: string; found: false; searched: string[] }
  | { entity: string; id: string; found: true; database: string; table: string; dbNowMs: number; transitions: Array<TransitionExplanation & WireFacts> }
>;

/** The path an event's payload names, or null when it cannot be decoded (the registry away). */
export type PathOf = (payload: Buffer) => Promise<string | null>;

/** PathOf through the schema registry the events were encoded with. */
export function eventPathOf(registryConfig: Config['registry']): PathOf {
  const registry = createSchemaRegistry(registryConfig);
  return async (payload) => {
    const value = (await registry.decode(payload).catch(() => undefined)) as { path?: unknown } | undefined;
    return typeof value?.path === 'string' ? value.path : null;
  };
}

export async function explainRow(
  config: Config,
  topology: Topology,
  catalogue: EntityCatalogue,
  entityName: string,
  id: string,
  opts: { database?: string; pathOf?: PathOf; wire?: WireLook } = {},
): Promise<RowExplanation> {
  const entity = entityOf(catalogue, entityName);
  const databases = entity.databases.filter((d) => opts.database === undefined || d === opts.database);
  const pools = openDatabases(config, catalogue);
  try {
    for (const database of databases) {
      const db = pools.pools[database]!;
      const row = await readExplainedRow(
        db,
        entity,
        entity.locations.filter((l) => l.database === database),
        id,
      );
      if (row === undefined) continue;
      const dbNowMs = await readDbNow(db);
      const transitions: Array<TransitionExplanation & WireFacts> = [];
      for (const t of entity.transitions) {
        const outbox: OutboxFact[] = [];
        for (const r of await readOutboxRowsOf(db, t, id)) {
          const times = parseEventKey(t, id, r.eventKey);
          if (times !== undefined)
            outbox.push({ eventKey: r.eventKey, topic: r.topic, createdAtMs: r.createdAtMs, ...times, path: (await opts.pathOf?.(r.payload)) ?? null });
        }
        const e = explainTransition(topology, entity, t, { id, at: row.location.key, status: row.status, dueMs: row.dueMs }, outbox, dbNowMs, formatUtc);
        transitions.push(opts.wire === undefined ? e : withWire(e, await lookAtWire(opts.wire, entity, t, { id, at: row.location.key }, e, dbNowMs)));
      }
      return { entity: entity.name, id, found: true, database, table: row.location.table, dbNowMs, transitions };
    }
    return { entity: entity.name, id, found: false, searched: entity.locations.filter((l) => databases.includes(l.database)).map((l) => l.key) };
  } finally {
    await pools.destroy();
  }
}

/** What the wire holds of a transition: a scheduled row's entry (ring placements only), a transitioned one's latest event. */
async function lookAtWire(
  wire: WireLook,
  entity: Entity,
  t: Transition,
  row: { id: string; at: string },
  e: TransitionExplanation,
  dbNowMs: number,
): Promise<WireFacts> {
  try {
    if (e.state === 'scheduled' && e.placement?.lane === 'ring' && e.dueMs !== null)
      return { entry: await wire.entryOf(entity, t, row, e.dueMs, e.placement, dbNowMs) };
    const latest = latestEvent(e.outbox);
    if (e.state === 'transitioned' && latest !== undefined) return { event: await wire.eventOf(latest) };
    return {};
  } catch (err) {
    if (err instanceof InterruptedError) throw err;
    // What the database says still answers the question; the look's failure is named beside it.
    return { unavailable: err instanceof Error ? err.message : String(err) };
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

type ExplainFlags = { database?: string; json?: boolean; wire: boolean; scanLimit: string };

export function registerExplainCommand(program: SetupCommand): void {
  const explain: SetupCommand = program
    .command('explain')
    .description('why one row did or did not move: its state by the database clock, its events, where its entry belongs')
    .argument('<entity>', "the entity's name in the entities file")
    // Checked as it is parsed: a usage error (64) even where the configuration is bad too.
    .argument('<id>', "the row's id (decimal)", (id: string): string => decimalId(id, explain))
    .option('--database <name>', 'only this database of a spread entity')
    .option('--json', 'print the explanation as one JSON object')
    .option('--no-wire', 'do not look for its entry or event on Kafka (the database only)')
    .option('--scan-limit <records>', 'at most this many records read per partition when looking on Kafka', '100000');
  // Reads the row and its event_outbox rows; the registry decodes their path; the topology places its entry.
  explain.actionWith({ uses: ['db', 'registry', 'kafka', 'topology', 'entities'], logTo: 'stderr' }, explainCommand);
}

async function explainCommand(
  { config, topology, catalogue, logger }: Setup<'db' | 'registry' | 'kafka' | 'topology' | 'entities'>,
  entity: string,
  id: string,
  opts: ExplainFlags,
  command: Command,
): Promise<void> {
  if (!catalogue.entities.some((e) => e.name === entity))
    command.error(`error: no entity '${entity}' (entities: ${catalogue.entities.map((e) => e.name).join(', ')})`, { exitCode: 64 });
  const pathOf = eventPathOf(config.registry);
  const maxRecords = Number(opts.scanLimit);
  if (!Number.isSafeInteger(maxRecords) || maxRecords < 1)
    command.error(`error: --scan-limit must be a positive integer (is ${JSON.stringify(opts.scanLimit)})`, { exitCode: 64 });
  const kafka = createKafka(config.kafka, logger, '-explain');
  // Ctrl-C during a look: its throwaway group is deleted, and interruptible exits 130 (SIGINT) or 143.
  const explanation = await interruptible((signal) =>
    explainRow(config, topology, catalogue, entity, id, {
      database: opts.database,
      pathOf,
      wire: opts.wire ? wireLook({ kafka, topology, catalogue, groupPrefix: config.groupPrefix, maxRecords, clock: systemClock, logger, signal }) : undefined,
    }),
  );
  if (explanation === undefined) return;
  if (opts.json === true) console.log(JSON.stringify(explanation));
  else for (const line of explanationLines(explanation)) console.log(line);
  if (!explanation.found) process.exitCode = 1;
}

function decimalId(id: string, command: Command): string {
  if (!/^[0-9]{1,20}$/.test(id)) command.error(`error: the id must be a decimal integer (is ${JSON.stringify(id)})`, { exitCode: 64 });
  return id;
}
