/**
 * Benchmark: a hot minute announced ahead. N coupons due at one instant T (the start of a
 * minute), written at least ANNOUNCE_S (300) seconds before T through the captured database, so the whole stream schedules them:
 * Debezium → repartitioner → the minute ring, where the forecast sees them minutes ahead. One
 * expirer runs from the start; a second is started by a scaler standing in for KEDA, which reads
 * one signal every SCRAPE_S (5) seconds and starts it once the signal reaches THRESHOLD (N/4):
 *
 *   forecast  the cascader's timebucket_forecast_entries, minute tier, positions 1 to 5 (the
 *             shipped ScaledObject's due-ahead trigger): seen minutes before T
 *   lag       the expirer's timebucket_due_lag (the lag trigger): seen only once T has come
 *
 * Each variant runs on a topology, topics and groups of its own (topics/local.json under a new
 * prefix), one after the other. Measured from the database after the run (the coupons'
 * expire_time and expired_at, by its clock): how long after T the last one moved (time to
 * drain) and the delay percentiles; and when the second expirer was started and ready,
 * relative to T.
 *
 *   make bench-announced [N=300000] [ANNOUNCE_S=300] [THRESHOLD=N/4] [SCRAPE_S=5] [VARIANTS=forecast,lag]
 *
 * Prints one JSON line and writes bench/results/announced-<timestamp>.json. Not a test.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig, type Config } from '../src/config';
import { declaredTopics } from '../src/core/topology';
import { createDb, type Db } from '../src/db/knex';
import { cdcTopicOf } from '../src/ingest/cdc-topics';
import { createKafka } from '../src/kafka/client';
import { pinNewGroupToEnd } from '../src/kafka/pin-group-start';
import { applyTopics } from '../src/kafka/topics-apply';
import { createLogger } from '../src/ops/logger';
import { writeStreamTopology } from './compare/contenders/stream-topology';
import { deleteRunState } from './compare/contenders/stream';
import { Child, freePort, startRoles, waitReady } from './lib/children';
import { dbNowMs } from './lib/db-server';
import { log, sleep } from './lib/log';
import { scrapeMetrics, type Scrape } from './lib/metrics-text';
import { defaultResultsDir } from './lib/paths';
import { summarize } from './lib/percentiles';
import { registerSchemas } from './lib/register-schemas';

type Variant = 'forecast' | 'lag';

/** A positive number from the environment; unset or empty (make passes its variables through) is the default. */
function setting(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (is ${JSON.stringify(text)})`);
  return value;
}

const n = setting('N', 300_000);
const announceS = setting('ANNOUNCE_S', 300);
const threshold = setting('THRESHOLD', Math.ceil(n / 4));
const scrapeS = setting('SCRAPE_S', 5);
const variants = (process.env['VARIANTS'] || 'forecast,lag').split(',').map((v) => v.trim()) as Variant[];
for (const v of variants) if (v !== 'forecast' && v !== 'lag') throw new Error(`VARIANTS: unknown variant ${JSON.stringify(v)} (forecast, lag)`);
const CHUNK = 5_000;

/** The scaler's signal, from one scrape: the forecast's next five minutes, or the due lag. */
function signalOf(variant: Variant, scrape: Scrape): number {
  let sum = 0;
  for (const [key, value] of scrape) {
    if (variant === 'forecast' && key.startsWith('timebucket_forecast_entries{') && key.includes('tier="minute"') && /position="[1-5]"/.test(key)) sum += value;
    if (variant === 'lag' && key.startsWith('timebucket_due_lag')) sum += value;
  }
  return sum;
}

const transitionsOf = (scrape: Scrape): number => [...scrape].filter(([k]) => k.startsWith('timebucket_transitions_total')).reduce((s, [, v]) => s + v, 0);

async function runVariant(variant: Variant, config: Config, db: Db, logDir: string) {
  const prefix = `tbann${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const { topology, path } = writeStreamTopology(prefix, {});
  const kafka = createKafka(
    config.kafka,
    createLogger('warn', { bench: prefix }, pino.destination({ dest: join(logDir, `${variant}-admin.log`), sync: true })),
    '-bench',
  );
  const admin = kafka.admin();
  await admin.connect();
  const topics = declaredTopics(topology);
  const children: Child[] = [];
  // No scanner runs, so no cursor completes a pass: a table of N coupons due at T is a large first
  // pass to every expirer started at or after T, which would hold it (core/first-pass-guard.ts).
  const env = {
    ...process.env,
    TB_TOPOLOGY: path,
    TB_GROUP_PREFIX: prefix,
    TB_LOG_LEVEL: 'warn',
    TB_FORECAST_INTERVAL_MS: String(scrapeS * 1000),
    TB_ALLOW_LARGE_FIRST_PASS: 'true',
  };
  const start = async (name: string, roles: string): Promise<{ child: Child; port: number }> => {
    const port = await freePort();
    const child = startRoles(
      name,
      roles,
      { ...env, TB_HTTP_PORT: String(port), TB_INSTANCE_ID: `${prefix}-${name}`.replace('+', '-').slice(0, 48) },
      join(logDir, `${variant}-${name}.log`),
    );
    children.push(child);
    return { child, port };
  };
  try {
    log(`${variant}: creating ${topics.length} topics under ${prefix}`);
    await applyTopics(admin, topics);
    await registerSchemas({ ...process.env, TB_TOPOLOGY: path }, topology);
    await pinNewGroupToEnd(admin, `${prefix}.repartitioner`, [cdcTopicOf(config.cdc, 'coupons'), cdcTopicOf(config.cdc, 'orders')]);
    const first = [await start('repartitioner', 'repartitioner'), await start('expirer-1', 'expirer'), await start('cascader', 'cascader,outbox-keeper')];
    for (const p of first) await waitReady(p.child, p.port);
    const [, expirer1, cascader] = first as [unknown, { port: number }, { port: number }];
    const expirerPorts = [expirer1.port];

    // T on the first whole minute at least ANNOUNCE_S ahead, by the database clock (the
    // expirer's): a hot minute starts with its bucket, so the due lag appears at T and not before.
    const tag = randomInt(1_000_000_000, 2_000_000_000);
    const t = Math.ceil(((await dbNowMs(db)) + announceS * 1000) / 60_000) * 60_000;
    log(`${variant}: writing ${n} coupons due at ${new Date(t).toISOString()} (user_id ${tag})`);
    for (let i = 0; i < n; i += CHUNK) {
      await db('coupons').insert(Array.from({ length: Math.min(CHUNK, n - i) }, () => ({ user_id: tag, status: 'ACTIVE', expire_time: new Date(t) })));
    }
    const writtenAtMs = await dbNowMs(db);
    log(`${variant}: written ${((t - writtenAtMs) / 1000).toFixed(0)} s before T; the scaler reads its signal every ${scrapeS} s, threshold ${threshold}`);

    // The scaler: one signal, one decision, every SCRAPE_S; the second expirer once the signal reaches the threshold.
    let secondStartedMs: number | null = null;
    let secondReadyMs: number | null = null;
    let signalAtStart = 0;
    let done = 0;
    for (;;) {
      const scrape = await scrapeMetrics(variant === 'forecast' ? cascader.port : expirer1.port).catch(() => new Map<string, number>());
      const signal = signalOf(variant, scrape);
      if (secondStartedMs === null && signal >= threshold) {
        secondStartedMs = await dbNowMs(db);
        signalAtStart = signal;
        log(`${variant}: signal ${signal} at T${secondStartedMs >= t ? '+' : '-'}${(Math.abs(secondStartedMs - t) / 1000).toFixed(1)} s: starting expirer-2`);
        const second = await start('expirer-2', 'expirer');
        expirerPorts.push(second.port);
        // Awaited only for its time: a second expirer that never gets ready shows as null.
        waitReady(second.child, second.port)
          .then(async () => {
            secondReadyMs = await dbNowMs(db);
          })
          .catch((err: unknown) => log(`${variant}: expirer-2 not ready: ${String(err)}`));
      }
      done = 0;
      for (const port of expirerPorts) done += transitionsOf(await scrapeMetrics(port).catch(() => new Map<string, number>()));
      if (done >= n) break;
      if ((await dbNowMs(db)) > t + 600_000) throw new Error(`${variant}: ${done} of ${n} transitioned 10 minutes after T`);
      await sleep(scrapeS * 1000);
    }

    // The delays, by the database clock, read once everything moved.
    const rows = (await db('coupons').where({ user_id: tag }).select(db.raw('TIMESTAMPDIFF(MICROSECOND, expire_time, expired_at) AS us'))) as Array<{
      us: number | string | null;
    }>;
    const movedRows = rows.filter((r) => r.us !== null);
    const delays = Float64Array.from(movedRows.map((r) => Number(r.us) / 1000));
    const moved = movedRows.length;
    const summary = summarize(delays);
    return {
      variant,
      coupons: n,
      moved,
      early: movedRows.filter((r) => Number(r.us) < 0).length,
      written_before_t_s: Math.round((t - writtenAtMs) / 1000),
      second_expirer_started_after_t_s: secondStartedMs === null ? null : (secondStartedMs - t) / 1000,
      second_expirer_ready_after_t_s: secondReadyMs === null ? null : (secondReadyMs - t) / 1000,
      signal_at_start: signalAtStart,
      last_transition_after_t_s: summary === null ? null : summary.max / 1000,
      delay_ms: summary,
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await deleteRunState(
      admin,
      prefix,
      topics.map((x) => x.topic),
      config.registry,
      topology.events.map((e) => e.topic),
      ['repartitioner', 'expirer', 'cascader', `probe-${prefix}-cascader`],
    );
    await admin.disconnect();
    rmSync(path, { force: true });
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createDb(config.db);
  const at = new Date().toISOString();
  const resultsDir = process.env['BENCH_RESULTS_DIR'] ?? defaultResultsDir;
  const logDir = join(resultsDir, 'logs', `announced-${at.replace(/:/g, '-')}`);
  mkdirSync(logDir, { recursive: true });
  try {
    const runs = [];
    for (const v of variants) runs.push(await runVariant(v, config, db, logDir));
    const result = {
      bench: 'announced-hot-minute',
      at,
      parameters: {
        n,
        announce_s: announceS,
        threshold,
        scrape_s: scrapeS,
        topology: 'topics/local.json, own prefix per variant',
        processes: 'repartitioner; expirer-1; cascader+outbox-keeper; expirer-2 started by the scaler',
      },
      runs,
    };
    const out = join(resultsDir, `announced-${at.replace(/:/g, '-')}.json`);
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    log(`results: ${out}; logs in ${logDir}`);
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-announced failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
