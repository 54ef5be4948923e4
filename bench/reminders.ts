/**
 * Benchmark: how late reminders fire (docs/reminders.md). RATE coupons a second for RUN_S seconds, each
 * due LEAD_S after it is written, with the fire points BEFORE (default 30s, 20s, 10s): one
 * COUPON_EXPIRING_SOON per coupon and fire point, through the whole stream (Debezium,
 * repartitioner, rings, cascader, expirer) on a topology, entities file and consumer groups of
 * the run's own.
 *
 *   make bench-reminders [RATE=1000] [RUN_S=60] [LEAD_S=40] [BEFORE=30s,20s,10s]
 *
 * Lateness: the reminder's commit by the database clock (its occurred_at) minus its fire point
 * (due_at − remind_before_ms), read back from event_outbox (each reminder decoded), where its
 * transaction wrote it; publishing adds the outbox connector's own latency on top
 * (bench/compare measures that for the transitions' events).
 * The coupons are expired as usual; their expiries share the expirer with the reminders.
 *
 * Prints one JSON line and writes bench/results/reminders-<timestamp>.json. Not a test.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { parseEntityFile } from '../src/core/entity-file';
import { declaredTopics, parseTopology, type TopologyJson } from '../src/core/topology';
import { createDb } from '../src/db/knex';
import { cdcTopicOf } from '../src/ingest/cdc-topics';
import { createKafka } from '../src/kafka/client';
import { pinNewGroupToEnd } from '../src/kafka/pin-group-start';
import { applyTopics } from '../src/kafka/topics-apply';
import { createLogger } from '../src/ops/logger';
import { freePort, startRoles, waitReady } from './lib/children';
import { dbNowMs } from './lib/db-server';
import { log, sleep } from './lib/log';
import { defaultResultsDir, repoRoot, topicsDir } from './lib/paths';
import { summarize } from './lib/percentiles';
import { defaultEventTopic } from '../src/core/event-catalogue';
import { createSchemaRegistry } from '../src/publish/schema-registry';
import { registerSchemas } from './lib/register-schemas';

/** An Avro timestamp-millis as decoded (a Date, or its epoch milliseconds). */
const millis = (v: unknown): number => (v instanceof Date ? v.getTime() : Number(v));

const rate = Number(process.env['RATE'] ?? 1_000);
const seconds = Number(process.env['RUN_S'] ?? 60);
const leadS = Number(process.env['LEAD_S'] ?? 40);
const before = (process.env['BEFORE'] ?? '30s,20s,10s').split(',').map((s) => s.trim());
const TICK_MS = 100;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const prefix = `tbremind${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const resultsDir = process.env['BENCH_RESULTS_DIR'] ?? defaultResultsDir;
  const logDir = join(resultsDir, 'logs', `reminders-${prefix}`);
  mkdirSync(logDir, { recursive: true });

  // The shipped entities file, its coupons reminded at BEFORE, one event per coupon and fire point.
  const entities = JSON.parse(readFileSync(join(repoRoot, 'entities/default.json'), 'utf8')) as {
    entities: Array<{ name: string; transitions: Array<Record<string, unknown>> }>;
  };
  entities.entities.find((e) => e.name === 'coupon')!.transitions[0]!['reminders'] = {
    before,
    event: {
      type: 'COUPON_EXPIRING_SOON',
      ceType: 'timebucket.coupon.expiring_soon',
      avroName: 'timebucket.events.CouponExpiringSoon',
      idField: 'coupon_id',
      summary: 'An ACTIVE coupon is about to expire.',
      fields: [{ name: 'user_id', column: 'user_id' }],
    },
  };
  const catalogue = parseEntityFile(entities, 'bench reminders');
  const entitiesPath = join(tmpdir(), `${prefix}.entities.json`);
  writeFileSync(entitiesPath, JSON.stringify(entities));
  const raw = JSON.parse(readFileSync(join(topicsDir, 'local.json'), 'utf8')) as TopologyJson;
  raw.prefix = prefix;
  const template = raw.events![0]!;
  raw.events = catalogue.events.map((e) => ({ ...template, type: e.type, topic: defaultEventTopic({ prefix }, e.type) }));
  const topology = parseTopology(raw, 'bench reminders topology');
  const topologyPath = join(tmpdir(), `${prefix}.json`);
  writeFileSync(topologyPath, JSON.stringify(raw));

  const kafka = createKafka(
    config.kafka,
    createLogger('warn', { bench: prefix }, pino.destination({ dest: join(logDir, 'bench-kafka.log'), sync: true })),
    '-bench',
  );
  const admin = kafka.admin();
  await admin.connect();
  const db = createDb(config.db);
  const topics = declaredTopics(topology).map((t) => t.topic);
  const port = await freePort();
  let child: ReturnType<typeof startRoles> | undefined;
  try {
    log(`creating ${topics.length} topics under ${prefix}; logs in ${logDir}`);
    await applyTopics(admin, declaredTopics(topology));
    await pinNewGroupToEnd(admin, `${prefix}.repartitioner`, [cdcTopicOf(config.cdc, 'coupons'), cdcTopicOf(config.cdc, 'orders')]);
    const env = {
      ...process.env,
      TB_TOPOLOGY: topologyPath,
      TB_ENTITIES: entitiesPath,
      TB_GROUP_PREFIX: prefix,
      TB_HTTP_PORT: String(port),
      TB_LOG_LEVEL: 'warn',
    };
    // As a deployment's `schemas register` Job does before the roles start.
    await registerSchemas(env, topology);
    child = startRoles('stream', 'repartitioner,expirer,cascader', env, join(logDir, 'stream.log'));
    await waitReady(child, port);

    const marker = 900_000_000 + Math.floor(Math.random() * 1_000_000);
    log(`writing ${rate}/s for ${seconds} s, each due ${leadS} s later, fire points ${before.join(', ')} before (user_id ${marker})`);
    const ids: number[] = [];
    const perTick = Math.max(1, Math.round((rate * TICK_MS) / 1000));
    const started = Date.now();
    for (let tick = 0; tick < (seconds * 1000) / TICK_MS; tick += 1) {
      const rows = Array.from({ length: perTick }, () => ({ user_id: marker, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL ? SECOND', [leadS]) }));
      const [first] = await db('coupons').insert(rows);
      for (let k = 0; k < perTick; k += 1) ids.push(first! + k);
      const next = started + (tick + 1) * TICK_MS;
      if (next > Date.now()) await sleep(next - Date.now());
    }
    const expected = ids.length * before.length;
    const [lo, hi] = [Math.min(...ids), Math.max(...ids)];
    const ofRun = () => db('event_outbox').where({ event_type: 'COUPON_EXPIRING_SOON' }).whereRaw('CAST(entity_id AS UNSIGNED) BETWEEN ? AND ?', [lo, hi]);
    const reminders = async () => (await ofRun().select('payload')) as Array<{ payload: Buffer }>;
    const deadline = (await dbNowMs(db)) + leadS * 1000 + 60_000;
    let found = 0;
    while ((await dbNowMs(db)) < deadline) {
      const [row] = (await ofRun().count({ n: '*' })) as Array<{ n: number }>;
      found = Number(row!.n);
      if (found >= expected) break;
      await sleep(1_000);
    }
    const rows = await reminders();
    const lateness = new Float64Array(rows.length);
    let afterDue = 0;
    const registry = createSchemaRegistry(config.registry);
    for (const [i, r] of rows.entries()) {
      const p = (await registry.decode(r.payload)) as Record<string, unknown>;
      const [occurredAt, dueAt, before] = [millis(p['occurred_at']), millis(p['due_at']), Number(p['remind_before_ms'])];
      lateness[i] = occurredAt - (dueAt - before);
      if (occurredAt >= dueAt) afterDue += 1;
    }
    const summary = summarize(lateness);
    const result = {
      bench: 'reminders',
      at: new Date().toISOString(),
      parameters: { rate, seconds, lead_s: leadS, before, topology: 'topics/local.json, own prefix', roles: 'repartitioner,expirer,cascader in one process' },
      coupons: ids.length,
      reminders_expected: expected,
      reminders_written: rows.length,
      sent_after_due: afterDue,
      lateness_ms: summary,
    };
    const out = join(resultsDir, `reminders-${result.at.replace(/:/g, '-')}.json`);
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    log(`results: ${out}`);
  } finally {
    await child?.stop();
    const groups = ['repartitioner', 'expirer', 'cascader'].map((g) => `${prefix}.${g}`);
    await admin.deleteGroups(groups).catch(() => undefined);
    for (let i = 0; i < topics.length; i += 50) await admin.deleteTopics({ topics: topics.slice(i, i + 50), timeout: 60_000 }).catch(() => undefined);
    await admin.disconnect();
    await db.destroy();
    rmSync(topologyPath, { force: true });
    rmSync(entitiesPath, { force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-reminders failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
