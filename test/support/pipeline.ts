/**
 * A timebucket pipeline of the test's own: unique topic prefix, event topics and consumer
 * groups, the scaled-down tier table of topics/test.json (second-wide buckets), topics applied,
 * roles started in this process against the real stack.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, Config } from '../../src/config';
import type { Clock } from '../../src/core/clock';
import { declaredTopics, isBucketLane, parseTopology, Topology } from '../../src/core/topology';
import { createKafka } from '../../src/kafka/client';
import { applyTopics } from '../../src/kafka/topics-apply';
import { knownToEveryBroker } from './topics';
import { Running, startTimebucket } from '../../src/main';
import { Role, Roles } from '../../src/roles';
import { createMetrics, Metrics } from '../../src/ops/metrics';
import { logger, uniqueName } from './stack';
import { withTimeout } from './wait-for';
import { cdcTopics } from '../../src/ingest/cdc-topics';
import { cdcTopicDeclarations } from '../../src/cli/topics-apply';
import { databasesOf, type EntityCatalogue } from '../../src/core/entity-catalogue';
import { loadEntities } from '../../src/ops/load-entities';
import { defaultEntitiesPath } from './catalogue';
import { schemasRegister } from '../../src/cli/schemas-register';
import { defaultEventTopic } from '../../src/core/event-catalogue';

export type TestPipeline = Readonly<{
  config: Config;
  topology: Topology;
  /** The entities the pipeline moves (entities/default.json unless `entities` was given). */
  catalogue: EntityCatalogue;
  /** Environment for a `timebucket run` child process joining this pipeline. */
  env: Readonly<Record<string, string>>;
  /** Metrics of every role started through `start`. */
  metrics: Metrics;
  start: (roles?: readonly Role[], clock?: Clock) => Promise<Running>;
  stopAll: () => Promise<void>;
  /** `timebucket schemas register` for this pipeline's topics (done at creation unless schemas: 'later'). */
  registerSchemas: () => Promise<void>;
}>;

/**
 * `entities`: an entities file's content (written to a temporary file, TB_ENTITIES), for a
 * pipeline on tables other than the demo ones; the topology then declares its events' topics.
 */
/** The topology file as read, for `editTopology` to change before it is parsed. */
export type RawTopology = {
  prefix: string;
  shards: number;
  tiers: Array<{ name: string; widthMs: number; ring: number; guard: number; leadMs: number; partitions: number }>;
  due: { partitions: number };
  events: Array<{ type: string; topic: string; partitions: number; retentionMs: number }>;
};

/**
 * `prefix`: another pipeline's (its topics and groups), for a test that changes the topology
 * under entries in flight; `editTopology` changes the file before it is parsed.
 */
export async function createTestPipeline(
  opts: {
    topologyFile?: string;
    env?: Record<string, string>;
    entities?: unknown;
    prefix?: string;
    editTopology?: (raw: RawTopology) => void;
    /** 'later': the event schemas are not registered here (the test calls registerSchemas). */
    schemas?: 'register' | 'later';
  } = {},
): Promise<TestPipeline> {
  const prefix = opts.prefix ?? uniqueName('tbt').replace(/-/g, '');
  const raw = JSON.parse(readFileSync(join(__dirname, '../../topics', opts.topologyFile ?? 'test.json'), 'utf8')) as RawTopology;
  raw.prefix = prefix;
  opts.editTopology?.(raw);
  const entitiesPath = opts.entities === undefined ? defaultEntitiesPath : join(tmpdir(), `${prefix}.entities.json`);
  if (opts.entities !== undefined) writeFileSync(entitiesPath, JSON.stringify(opts.entities));
  const catalogue = loadEntities(entitiesPath);
  const template = raw.events[0]!;
  raw.events = catalogue.events.map((e) => ({ ...template, type: e.type }));
  for (const e of raw.events) e.topic = defaultEventTopic({ prefix }, e.type);
  const topology = parseTopology(raw, 'test topology');
  const topologyPath = join(tmpdir(), `${prefix}.json`);
  writeFileSync(topologyPath, JSON.stringify(raw));
  const env: Record<string, string> = {
    TB_TOPOLOGY: topologyPath,
    TB_ENTITIES: entitiesPath,
    TB_GROUP_PREFIX: prefix,
    TB_COMMIT_INTERVAL_MS: '200',
    TB_SESSION_TIMEOUT_MS: '10000',
    TB_HEARTBEAT_INTERVAL_MS: '1000',
    ...opts.env,
  };
  const config = loadConfig({ ...process.env, ...env });

  const admin = createKafka(config.kafka, logger, '-test-topics').admin();
  await admin.connect();
  try {
    // Grown, for a test that raises a partition count under another pipeline's entries.
    const declared = declaredTopics(topology, databasesOf(catalogue));
    await applyTopics(admin, declared, { growPartitions: (topic) => isBucketLane(topology, topic) });
    await knownToEveryBroker(admin, new Map(declared.map((d) => [d.topic, d.partitions])));
    // The test's repartitioner starts at the current end of the CDC topics: a long-lived dev
    // stack holds millions of older changes (benchmarks) that would only delay the test.
    // (A pipeline on a test database of its own has no CDC topics: Debezium captures `timebucket`.)
    const existing = new Set(await admin.listTopics());
    for (const topic of Object.keys(cdcTopics(config, catalogue)).filter((t) => existing.has(t))) {
      const ends = await admin.fetchTopicOffsets(topic);
      await admin.setOffsets({ groupId: `${prefix}.repartitioner`, topic, partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })) });
    }
  } finally {
    await admin.disconnect();
  }

  // As the deployment's `schemas register` Job does before the processes start: `run` reads the ids.
  const registerSchemas = async () => void (await schemasRegister(config, topology, catalogue, logger, () => undefined));
  if (opts.schemas !== 'later') await registerSchemas();

  const running: Running[] = [];
  const metrics = createMetrics({ entities: catalogue.entities.map((e) => e.name), transitions: catalogue.transitions });
  return {
    config,
    topology,
    catalogue,
    env,
    metrics,
    registerSchemas,
    // The stream roles by default; a test of the compensation scanner starts it explicitly.
    async start(roles = Roles.filter((r) => r !== 'scanner'), clock) {
      const r = await startTimebucket(config, topology, { roles, logger, clock, metrics, instanceId: uniqueName('i'), catalogue });
      running.push(r);
      // Rows written before the consumers own partitions would measure group start-up, not the pipeline.
      await withTimeout('the pipeline consumers to join their groups', r.ready(), 60_000);
      return r;
    },
    async stopAll() {
      await Promise.all(running.splice(0).map((r) => r.stop()));
    },
  };
}

/**
 * The CDC topics of `pipeline`'s entities file, as `topics apply` declares them: for a pipeline
 * on tables of its own, before its repartitioner subscribes (Debezium creates a table's topic
 * only with the table's first change).
 */
export async function applyCdcTopics(pipeline: TestPipeline): Promise<void> {
  const admin = createKafka(pipeline.config.kafka, logger, '-test-cdc-topics').admin();
  await admin.connect();
  try {
    const declared = cdcTopicDeclarations(pipeline.config, pipeline.catalogue);
    await applyTopics(admin, declared);
    await knownToEveryBroker(admin, new Map(declared.map((d) => [d.topic, d.partitions])));
  } finally {
    await admin.disconnect();
  }
}
