/**
 * `make bench`: timebucket side by side with the alternatives, on the same rows, one run.
 * Every workload (hot, steady, mixed) against every contender (raw, poller, scanner, stream),
 * one after the other on the local stack; see bench/README.md for what each figure means and
 * how it is measured. Writes bench/results/<ISO timestamp>.json and prints a Markdown table on
 * stdout (progress on stderr). Exit code 1 if any run failed or was not exact.
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
import { markdownTable, ratiosOf, writeResults } from './report';
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
    log(`bench ${params.preset}: workloads ${params.workloads.join(',')} × contenders ${params.contenders.join(',')}; logs in ${logDir}`);
    const runs: RunResult[] = [];
    for (const workload of params.workloads) {
      for (const name of params.contenders) runs.push(await runOne({ params, config, serverDb, logDir }, workload, CONTENDERS[name]));
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
          mixed_shards: 16,
          mixed_partitions: params.mixedPartitions ?? 'as local.json (4)',
        },
        stall_s: params.stallS,
        timeout_s: params.timeoutS,
      },
      machine,
      baseline,
      runs,
      ratios: ratiosOf(params, runs),
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
