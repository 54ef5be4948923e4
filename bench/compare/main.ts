/**
 * `make bench`: timebucket side by side with the alternatives, on the same rows. Every workload
 * (hot, steady, mixed) against every contender (raw, poller, scanner, stream), one after the
 * other on the local stack, after a warm-up round (WARMUP), in RUNS rounds (default 3) whose contender order alternates; each
 * run on a database of its own (the stream's captured by connectors of its own), the stack's
 * connectors paused meanwhile. See bench/README.md for what each figure means and how it is
 * measured. Writes bench/results/<ISO timestamp>.json and prints a Markdown table on stdout
 * (progress on stderr): the medians of the rounds first. Exit code 1 if any run failed or was not exact.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { rowsRead } from '../lib/db-server';
import { log, sleep } from '../lib/log';
import { machineInfo } from '../lib/machine';
import { defaultResultsDir } from '../lib/paths';
import type { Contender } from './contender';
import { poller } from './contenders/poller';
import { raw } from './contenders/raw';
import { scanner } from './contenders/scanner';
import { paced, stream } from './contenders/stream';
import { ContenderName, readParams } from './params';
import { markdownTable, summaryOf, writeResults } from './report';
import { pauseAllConnectors } from '../lib/connect-rest';
import { roundOrder } from './repeats';
import { runOne } from './run-one';
import type { RunResult } from './run-result';

const BASELINE_S = 5;
const CONTENDERS: Readonly<Record<ContenderName, Contender>> = { raw, poller, scanner, stream, paced };

async function main(): Promise<number> {
  const params = readParams(process.env);
  const config = loadConfig(process.env);
  const startedAt = new Date().toISOString();
  const resultsDir = params.resultsDir ?? defaultResultsDir;
  const logDir = join(resultsDir, 'logs', startedAt.replace(/:/g, '-'));
  mkdirSync(logDir, { recursive: true });
  const serverDb = createDb(config.db);
  try {
    const machine = await machineInfo(serverDb);
    // What the server reads with no bench running: rows examined are server-wide, so this is the
    // noise under every run's figure (0 on a quiet stack, apart from the stack's own polling).
    const before = await rowsRead(serverDb);
    await sleep(BASELINE_S * 1000);
    const baseline = { seconds: BASELINE_S, rows_examined_per_second: Math.round(((await rowsRead(serverDb)) - before) / BASELINE_S) };
    log(`baseline: ${baseline.rows_examined_per_second} rows examined per second with no bench running`);
    log(
      `bench ${params.preset}: workloads ${params.workloads.join(',')} × contenders ${params.contenders.join(',')} × ${params.runs} rounds; logs in ${logDir}`,
    );
    const runs: RunResult[] = [];
    const resume = params.pauseConnectors ? await pauseAllConnectors() : async () => undefined;
    if (params.pauseConnectors) log("the stack's own connectors are paused until the bench ends");
    // An interrupted bench still leaves the stack's pipeline running.
    const onSignal = () => void resume().finally(() => process.exit(130));
    process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
    try {
      if (params.warmup) {
        // Round 0: not in the medians (repeats.ts), its runs kept in the results as what they were.
        const warm = { ...params, n: Math.max(1_000, Math.round(params.n / 5)) };
        log(`warm-up: every contender once on ${warm.n} rows, not counted`);
        for (const workload of params.workloads) {
          for (const name of params.contenders) runs.push(await runOne({ params: warm, config, serverDb, logDir }, workload, CONTENDERS[name], 0));
        }
      }
      for (let round = 1; round <= params.runs; round++) {
        // Alternating: a machine that warms up (or heats up) over the bench favours no contender.
        const order = roundOrder(params.contenders, round);
        for (const workload of params.workloads) {
          for (const name of order) runs.push(await runOne({ params, config, serverDb, logDir }, workload, CONTENDERS[name], round));
        }
      }
    } finally {
      await resume();
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    }
    const results = {
      bench: 'compare' as const,
      started_at: startedAt,
      finished_at: new Date().toISOString(),
      parameters: {
        preset: params.preset,
        N: params.n,
        R: params.ratePerSecond,
        M: params.minutes,
        workloads: params.workloads,
        contenders: params.contenders,
        lead_s: params.leadS ?? 'default: stream ceil(rows / 4000) + 30, others ceil(rows / 10000) + 5',
        steady_lead_s: params.steadyLeadS,
        expirer: { batch_size: config.expirer.batchSize, concurrency: config.expirer.concurrency },
        poller: { interval_s: params.pollIntervalS, max_run_s: params.pollMaxRunS, page_size: 300, parallel: 8 },
        scanner: {
          grace_ms: params.scanner.graceMs,
          interval_ms: params.scanner.intervalMs,
          max_pages_per_second: params.scanner.maxPagesPerSecond,
          page_size: config.scanner.pageSize,
          production_defaults: { grace_ms: 60_000, interval_ms: 30_000, max_pages_per_second: 5 },
        },
        stream: {
          topology: 'topics/local.json, own prefix',
          expirer_processes: params.expirers,
          captured_database: "the run's own, with CDC and outbox connectors of its own; the stack's connectors paused during the bench",
          mixed_shards: 16,
          mixed_partitions: params.mixedPartitions ?? 'as local.json (4)',
        },
        runs: params.runs,
        warmup: params.warmup ? 'round 0: every contender once on a fifth of N (at least 1,000), not in the medians' : 'none',
        order: 'alternating: CONTENDERS in odd rounds, reversed in even ones',
        stall_s: params.stallS,
        timeout_s: params.timeoutS,
      },
      machine,
      baseline,
      runs,
      ...summaryOf(params, runs),
    };
    const file = writeResults(resultsDir, results);
    console.log(markdownTable(results));
    log(`results: ${file}`);
    return runs.every((r) => r.ok) ? 0 : 1;
  } finally {
    await serverDb.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
