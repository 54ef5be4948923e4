/**
 * Benchmark: memory against work scheduled ahead. S bucket entries due well after the run
 * (AHEAD_MIN_S..AHEAD_MAX_S, default 20 to 75 minutes, inside the minute ring's horizon of 78, so
 * they sit in the expirer's own topics; HOUR_SHARE of them, default 0.1, 2 to 24 hours ahead, in
 * the hour ring the cascader holds). Then `timebucket run --roles expirer` and, separately,
 * `--roles cascader` start on them, and their resident memory is read every second for OBSERVE_S
 * seconds. A holder reads one undue head per partition and pauses there, so nothing it keeps
 * should grow with S: run it at two sizes and compare.
 *
 *   make bench-scheduled-ahead S=10000000 [OBSERVE_S=60] [HOUR_SHARE=0.1] [AHEAD_MIN_S=1200] [AHEAD_MAX_S=4500]
 *
 * The entries are appended straight to the rings of a topology of the run's own, built by the
 * project's bucketRecord() as the repartitioner builds them: no database rows, no CDC (ten
 * million through Debezium take about 40 minutes). The roles touch the database only for their
 * control switches. Afterwards the run's topics and consumer groups are deleted.
 *
 * Prints one JSON line. Not a test: nothing is asserted.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Admin, CompressionTypes, Partitioners, Producer } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../src/config';
import type { BucketEntry } from '../src/core/bucket-entry';
import type { EntityCatalogue } from '../src/core/entity-catalogue';
import { bucketRecord, byTopic } from '../src/core/bucket-record';
import { bucketStartOf, declaredTopics, Topology } from '../src/core/topology';
import { createKafka } from '../src/kafka/client';
import { groupIdOf } from '../src/roles';
import { applyTopics } from '../src/kafka/topics-apply';
import { createLogger } from '../src/ops/logger';
import { loadEntities } from '../src/ops/load-entities';
import { writeStreamTopology } from './compare/contenders/stream-topology';
import { Child, freePort, startRoles, waitReady } from './lib/children';
import { log, sleep } from './lib/log';
import { sample, scrapeMetrics, Scrape } from './lib/metrics-text';
import { defaultResultsDir } from './lib/paths';
import { cpuSeconds, memoryMb } from './lib/proc';
import { RssSummary, rssSeries } from './lib/rss-series';

const s = Number(process.env['S'] ?? 1_000_000);
const observeS = Number(process.env['OBSERVE_S'] ?? 60);
const hourShare = Number(process.env['HOUR_SHARE'] ?? 0.1);
const aheadMinS = Number(process.env['AHEAD_MIN_S'] ?? 1_200);
const aheadMaxS = Number(process.env['AHEAD_MAX_S'] ?? 4_500);
// Beyond the minute ring's horizon (78 minutes in local.json) and within the hour ring's (28 hours).
const hourAheadS = [2 * 3_600, 24 * 3_600] as const;
// Records per produce request, and requests in flight: large enough that the producer, not the
// round trips, sets the pace.
const produceBatch = 20_000;
const produceInFlight = 4;
// /metrics is scraped this often during the observation (/proc costs the process nothing; a scrape does a little).
const scrapeEveryS = 5;

type Lane = Readonly<{ tier: 'minute' | 'hour'; count: number; fromS: number; toS: number }>;
type Produced = Readonly<{ seconds: number; partitions: Record<string, number>; earliestReleaseMs: number }>;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const catalogue = loadEntities(config.entitiesPath);
  const prefix = `tbahead${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const logDir = join(process.env['BENCH_RESULTS_DIR'] ?? defaultResultsDir, 'logs', `scheduled-ahead-${prefix}`);
  mkdirSync(logDir, { recursive: true });
  const { topology, path } = writeStreamTopology(prefix, {});
  // kafkajs's own complaints go to the run's log: stdout is the result line.
  const kafka = createKafka(
    config.kafka,
    createLogger('warn', { bench: prefix }, pino.destination({ dest: join(logDir, 'bench-kafka.log'), sync: true })),
    '-bench',
  );
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  const declared = declaredTopics(topology);
  const topics = declared.map((t) => t.topic);
  const children: Child[] = [];
  process.once('SIGINT', () => {
    children.forEach((c) => c.process.kill('SIGTERM'));
    log(`interrupted: topics and groups under ${prefix} are left behind`);
    process.exit(130);
  });
  await admin.connect();
  try {
    log(`creating ${topics.length} topics under ${prefix}; logs in ${logDir}`);
    await applyTopics(admin, declared);
    await producer.connect();
    const hourCount = Math.round(s * hourShare);
    const lanes: Lane[] = [
      { tier: 'minute', count: s - hourCount, fromS: aheadMinS, toS: aheadMaxS },
      { tier: 'hour', count: hourCount, fromS: hourAheadS[0], toS: hourAheadS[1] },
    ];
    const produced = await produce(producer, topology, catalogue, lanes);

    const env = { ...process.env, TB_TOPOLOGY: path, TB_GROUP_PREFIX: prefix, TB_LOG_LEVEL: process.env['TB_LOG_LEVEL'] ?? 'warn' };
    const ports: number[] = [];
    for (const role of ['expirer', 'cascader']) {
      const port = await freePort();
      ports.push(port);
      children.push(startRoles(role, role, { ...env, TB_HTTP_PORT: String(port), TB_INSTANCE_ID: `${prefix}-${role}` }, join(logDir, `${role}.log`)));
    }
    await Promise.all(children.map((c, i) => waitReady(c, ports[i]!)));
    log(`expirer and cascader ready: observing for ${observeS} s`);
    const wanted = children.map((c) => produced.partitions[c.name === 'expirer' ? 'minute' : 'hour'] ?? 0);
    const observed = await observe(children, ports, wanted);
    const notes: string[] = [];
    if (Date.now() >= produced.earliestReleaseMs) notes.push('the run outlasted the earliest release: entries were taken (raise AHEAD_MIN_S)');
    const processes = Object.fromEntries(
      children.map((c, i) => {
        const o = observed[i]!;
        const stage = c.name;
        const held = sample(o.end, 'timebucket_held_partitions', { stage });
        if (held !== wanted[i]) notes.push(`${stage}: ${held} partitions held of ${wanted[i]} with entries`);
        return [
          stage,
          {
            rss_mb: o.rss,
            peak_rss_mb: memoryMb(c.process.pid!)?.peakRssMb ?? null,
            cpu_seconds: cpuSeconds(c.process.pid!),
            heap_used_mb: mb(sample(o.end, 'nodejs_heap_size_used_bytes')),
            in_memory_entries: { max: o.inMemoryMax, end: sample(o.end, 'timebucket_in_memory_entries', { stage }) },
            due_lag: { max: o.dueLagMax, end: sample(o.end, 'timebucket_due_lag_messages', { stage }) },
            held_partitions: held,
            partitions_with_entries: wanted[i],
            settled_after_s: o.settledAfterS,
          },
        ];
      }),
    );
    console.log(
      JSON.stringify({
        bench: 'scheduled-ahead',
        scheduled: s,
        by_tier: Object.fromEntries(lanes.map((l) => [l.tier, { entries: l.count, due_in_s: [l.fromS, l.toS] }])),
        produce_seconds: produced.seconds,
        produce_per_second: Math.round(s / Math.max(produced.seconds, 0.001)),
        observe_seconds: observeS,
        max_in_memory_per_partition: config.expirer.maxInMemoryPerPartition,
        processes,
        notes,
      }),
    );
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await producer.disconnect().catch(() => undefined);
    await deleteRunState(admin, prefix, topics);
    await admin.disconnect();
    rmSync(path, { force: true });
  }
}

/**
 * Appends every lane's entries, due times uniform over the lane's window from the start of
 * producing, ids random 64-bit. Each record is routed at the clock of its batch, as the
 * repartitioner routes, and must land in its lane's tier: a window the router puts elsewhere
 * would measure something else. Not idempotent: a retried request may append duplicates, which
 * the holders treat like any entry.
 */
async function produce(producer: Producer, topology: Topology, catalogue: EntityCatalogue, lanes: readonly Lane[]): Promise<Produced> {
  const startedAt = Date.now();
  const partitions = new Map<string, Set<string>>();
  let earliestReleaseMs = Number.POSITIVE_INFINITY;
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let sent = 0;
  let lastLog = startedAt;
  for (const lane of lanes) {
    const tier = topology.tiers.find((t) => t.name === lane.tier)!;
    const seen = partitions.get(lane.tier) ?? new Set<string>();
    partitions.set(lane.tier, seen);
    for (let i = 0; i < lane.count; i += produceBatch) {
      const n = Math.min(produceBatch, lane.count - i);
      const ids = randomBytes(8 * n);
      const now = Date.now();
      const records = Array.from({ length: n }, (_, k) => {
        const expireAtMs = startedAt + Math.floor((lane.fromS + Math.random() * (lane.toS - lane.fromS)) * 1000);
        // 0 is no id: BIGINT UNSIGNED ids start at 1.
        const entry: BucketEntry = { entity: 'coupon', transition: 'expired', id: String(ids.readBigUInt64BE(8 * k) || 1n), expireAtMs };
        const record = bucketRecord(topology, catalogue, entry, now);
        if (record.headers['tier'] !== lane.tier) {
          throw new Error(
            `an entry due in ${Math.round((expireAtMs - now) / 1000)} s is routed to ${record.headers['tier']}, not ${lane.tier}: choose its window within the ${lane.tier} ring's horizon`,
          );
        }
        earliestReleaseMs = Math.min(earliestReleaseMs, bucketStartOf(tier, expireAtMs) - tier.leadMs);
        seen.add(`${record.topic}:${record.partition}`);
        return record;
      });
      const request: Promise<void> = producer
        .sendBatch({ acks: -1, compression: CompressionTypes.None, topicMessages: byTopic(records) })
        .then(
          () => void (sent += n),
          (err: unknown) => void (failure ??= err),
        )
        .finally(() => inFlight.delete(request));
      inFlight.add(request);
      if (inFlight.size >= produceInFlight) await Promise.race(inFlight);
      if (failure !== undefined) throw failure;
      if (Date.now() - lastLog >= 5_000) {
        lastLog = Date.now();
        log(`produced ${sent} of ${s} (${Math.round(sent / ((lastLog - startedAt) / 1000))}/s)`);
      }
    }
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure;
  const seconds = (Date.now() - startedAt) / 1000;
  log(`produced ${sent} entries in ${seconds.toFixed(1)} s`);
  return { seconds, partitions: Object.fromEntries([...partitions].map(([tier, set]) => [tier, set.size])), earliestReleaseMs };
}

type Observed = Readonly<{ rss: RssSummary | null; inMemoryMax: number | null; dueLagMax: number | null; settledAfterS: number | null; end: Scrape }>;

/**
 * RSS of each child every second for OBSERVE_S seconds, and its hold gauges: every second until
 * it holds every partition that has entries (`settled`: what it reads from then on is nothing),
 * every few seconds after that; one last scrape at the end.
 */
async function observe(children: readonly Child[], ports: readonly number[], wanted: readonly number[]): Promise<Observed[]> {
  const series = children.map((c) => rssSeries(c.process.pid!));
  const inMemoryMax: Array<number | null> = children.map(() => null);
  const dueLagMax: Array<number | null> = children.map(() => null);
  const settledAfterS: Array<number | null> = children.map(() => null);
  const start = Date.now();
  const max = (a: number | null, b: number | null) => (b === null ? a : a === null ? b : Math.max(a, b));
  const scrapeAll = () =>
    Promise.all(
      children.map(async (c, i) => {
        const scrape = await scrapeMetrics(ports[i]!);
        inMemoryMax[i] = max(inMemoryMax[i] ?? null, sample(scrape, 'timebucket_in_memory_entries', { stage: c.name }));
        dueLagMax[i] = max(dueLagMax[i] ?? null, sample(scrape, 'timebucket_due_lag_messages', { stage: c.name }));
        if (settledAfterS[i] === null && sample(scrape, 'timebucket_held_partitions', { stage: c.name }) === wanted[i]) {
          settledAfterS[i] = Math.round((Date.now() - start) / 100) / 10;
        }
        return scrape;
      }),
    );
  for (let tick = 0; tick < observeS; tick += 1) {
    // Ticks on a fixed schedule, so a slow scrape does not stretch the observation.
    await sleep(Math.max(0, start + tick * 1_000 - Date.now()));
    for (const c of children) {
      const exit = c.exit();
      if (exit !== undefined) throw new Error(`${c.name} exited during the observation (code ${exit.code}, signal ${exit.signal})`);
    }
    series.forEach((x) => x.sample());
    if (tick % scrapeEveryS === 0 || settledAfterS.includes(null)) await scrapeAll();
    if (tick % 10 === 0) log(`t=${tick} s: rss ${children.map((c) => `${c.name} ${memoryMb(c.process.pid!)?.rssMb ?? '?'} MiB`).join(', ')}`);
  }
  await sleep(Math.max(0, start + observeS * 1_000 - Date.now()));
  series.forEach((x) => x.sample());
  const end = await scrapeAll();
  return children.map((_, i) => ({
    rss: series[i]!.summary(),
    inMemoryMax: inMemoryMax[i] ?? null,
    dueLagMax: dueLagMax[i] ?? null,
    settledAfterS: settledAfterS[i] ?? null,
    end: end[i]!,
  }));
}

const mb = (bytes: number | null) => (bytes === null ? null : Math.round((bytes / 2 ** 20) * 10) / 10);

/** Best effort: a leftover topic or group is untidy, not wrong, so failures are only logged. */
async function deleteRunState(admin: Admin, prefix: string, topics: readonly string[]): Promise<void> {
  const groups = (['expirer', 'cascader'] as const).map((role) => groupIdOf(prefix, role));
  await admin.deleteGroups(groups).catch((err: unknown) => log(`could not delete the groups of ${prefix}: ${String(err)}`));
  for (let i = 0; i < topics.length; i += 50) {
    await admin
      .deleteTopics({ topics: topics.slice(i, i + 50), timeout: 60_000 })
      .catch((err: unknown) => log(`could not delete topics of ${prefix}: ${String(err)}`));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
