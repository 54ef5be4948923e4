/**
 * Benchmark: a poison storm. P change records the repartitioner must reject (a schema change or a
 * bad deploy upstream; default 400,000) land on the coupons CDC topic ahead of G real coupon
 * changes (default 20,000, due a few seconds after they are written). Measures what the storm
 * costs: how long the repartitioner takes to dead-letter it, its CPU seconds doing so, and when
 * the good coupons behind it expire. Roles run as separate processes against the local stack,
 * with a topic prefix and groups of the run's own (the repartitioner starts at the current end
 * of the CDC topics).
 *
 *   make bench-poison-storm P=400000 G=20000
 *
 * Prints one JSON line of results. Not a test: nothing is asserted.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { createDb, Db } from '../src/db/knex';
import { createKafka } from '../src/kafka/client';
import { applyTopics } from '../src/kafka/topics-apply';
import { declaredTopics, dlqTopic, parseTopology } from '../src/core/topology';
import { createLogger } from '../src/ops/logger';
import { log, sleep } from './lib/log';
import { percentile as pct } from './lib/percentiles';
import { cpuSeconds as cpuSecondsOrNull } from './lib/proc';
import { cdcTopicOf } from '../src/ingest/cdc-topics';
import { defaultEventTopic } from '../src/core/event-catalogue';
import { registerSchemas } from './lib/register-schemas';

const poison = Number(process.env['P'] ?? 400_000);
const good = Number(process.env['G'] ?? 20_000);
const cli = join(__dirname, '../src/cli/main.js');
const cpuSeconds = (pid: number) => cpuSecondsOrNull(pid) ?? NaN;

async function main(): Promise<void> {
  const run = `bench${Date.now().toString(36)}`;
  const raw = JSON.parse(readFileSync(join(__dirname, '../../topics/local.json'), 'utf8')) as {
    prefix: string;
    events: Array<{ type: string; topic: string }>;
  };
  raw.prefix = run;
  for (const e of raw.events) e.topic = defaultEventTopic({ prefix: run }, e.type);
  const topology = parseTopology(raw, 'bench topology');
  const topologyPath = join(tmpdir(), `${run}.json`);
  writeFileSync(topologyPath, JSON.stringify(raw));
  const env = { ...process.env, TB_TOPOLOGY: topologyPath, TB_GROUP_PREFIX: run, TB_LOG_LEVEL: process.env['TB_LOG_LEVEL'] ?? 'warn' };
  const config = loadConfig(env);
  const logger = createLogger('warn');
  const kafka = createKafka(config.kafka, logger, '-bench');
  const admin = kafka.admin();
  await admin.connect();
  const db: Db = createDb(config.db);
  const children: ChildProcess[] = [];
  try {
    await applyTopics(admin, declaredTopics(topology));
    const topic = cdcTopicOf(config.cdc, 'coupons');
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.setOffsets({ groupId: `${run}.repartitioner`, topic, partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })) });

    log(`producing ${poison} poison records to ${topic}`);
    const producer = kafka.producer();
    await producer.connect();
    const value = Buffer.from(JSON.stringify({ op: 'c', before: null, after: { id: -1, status: 'ACTIVE', expire_time: 0 }, source: { table: 'coupons' } }));
    for (let i = 0; i < poison; i += 10_000) {
      const n = Math.min(10_000, poison - i);
      await producer.send({ topic, acks: 1, messages: Array.from({ length: n }, (_, k) => ({ partition: (i + k) % ends.length, key: 'poison', value })) });
    }
    await producer.disconnect();

    const [nowRow] = (await db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>];
    const due = nowRow[0]!.now.getTime() + 10_000;
    log(`writing ${good} coupons due at ${new Date(due).toISOString()}, behind the storm`);
    let first = 0;
    let last = 0;
    for (let i = 0; i < good; i += 5_000) {
      const rows = Array.from({ length: Math.min(5_000, good - i) }, () => ({ user_id: 78, status: 'ACTIVE', expire_time: new Date(due) }));
      const [id] = await db('coupons').insert(rows);
      if (i === 0) first = id!;
      last = id! + rows.length - 1;
    }
    if (last - first + 1 !== good) throw new Error('ids are not contiguous: another writer interleaved; rerun on a quiet database');
    const dlqBefore = await admin.fetchTopicOffsets(dlqTopic(topology)).then((o) => o.reduce((a, p) => a + Number(p.high), 0));

    await registerSchemas(env);
    const started = Date.now();
    const repartitioner = spawn(process.execPath, [cli, 'run', '--roles', 'repartitioner'], {
      env: { ...env, TB_HTTP_PORT: '9481' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(repartitioner);
    children.push(
      spawn(process.execPath, [cli, 'run', '--roles', 'expirer,cascader'], { env: { ...env, TB_HTTP_PORT: '9482' }, stdio: ['ignore', 'inherit', 'inherit'] }),
    );

    let stormSeconds = NaN;
    let stormCpu = NaN;
    for (;;) {
      const dead = (await admin.fetchTopicOffsets(dlqTopic(topology))).reduce((a, p) => a + Number(p.high), 0) - dlqBefore;
      if (dead >= poison) {
        stormSeconds = (Date.now() - started) / 1000;
        stormCpu = cpuSeconds(repartitioner.pid!);
        break;
      }
      if (Date.now() - started > 15 * 60_000) throw new Error(`storm not dead-lettered within 15 minutes (${dead}/${poison})`);
      await sleep(250);
    }
    log(`storm dead-lettered in ${stormSeconds.toFixed(1)} s (repartitioner ${stormCpu.toFixed(1)} CPU s)`);
    for (;;) {
      const [rows] = (await db.raw("SELECT COUNT(*) AS n FROM coupons WHERE id BETWEEN ? AND ? AND status = 'EXPIRED'", [first, last])) as [
        Array<{ n: number }>,
      ];
      if (Number(rows[0]!.n) === good) break;
      if (Date.now() - started > 20 * 60_000) throw new Error('good coupons not expired within 20 minutes');
      await sleep(500);
    }
    const totalCpu = cpuSeconds(repartitioner.pid!);
    const [delayRows] = (await db.raw(
      'SELECT TIMESTAMPDIFF(MICROSECOND, expire_time, expired_at) / 1000 AS d FROM coupons WHERE id BETWEEN ? AND ? ORDER BY d',
      [first, last],
    )) as [Array<{ d: number | string }>];
    const delays = delayRows.map((r) => Number(r.d));
    console.log(
      JSON.stringify({
        bench: 'poison-storm',
        poison_records: poison,
        good_records: good,
        storm_dead_lettered_seconds: stormSeconds,
        repartitioner_cpu_seconds_storm: stormCpu,
        repartitioner_cpu_seconds_good: Number((totalCpu - stormCpu).toFixed(2)),
        first_good_expired_ms_after_due: delays[0],
        good_delay_ms: { p50: pct(delays, 50), p99: pct(delays, 99), max: delays[delays.length - 1] },
      }),
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await admin.disconnect();
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
