/**
 * The parameters of `make bench`, from the environment (the Makefile passes its variables),
 * validated once. BENCH_PRESET=smoke is `make bench-smoke`: tiny sizes, a 2 s poll, short
 * leads; any variable set explicitly still wins over the preset.
 */
import { z } from 'zod';

export const WorkloadNames = ['hot', 'steady', 'mixed', 'isolation'] as const;
/** What `make bench` runs unless WORKLOADS says otherwise: isolation is asked for by name. */
const DEFAULT_WORKLOADS = ['hot', 'steady', 'mixed'] as const;
export type WorkloadName = (typeof WorkloadNames)[number];
export const ContenderNames = ['raw', 'poller', 'scanner', 'stream', 'paced'] as const;
/** What `make bench` runs unless CONTENDERS says otherwise: `paced` (the stream with pacing on) is asked for by name. */
const DEFAULT_CONTENDERS = ['raw', 'poller', 'scanner', 'stream'] as const;
export type ContenderName = (typeof ContenderNames)[number];

const list = <T extends string>(names: readonly [T, ...T[]]) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x.length > 0),
    )
    .pipe(z.array(z.enum(names)).min(1));

const EnvSchema = z.object({
  N: z.coerce.number().int().min(1).default(1_000_000),
  R: z.coerce.number().int().min(1).default(5_000),
  M: z.coerce.number().positive().default(2),
  WORKLOADS: list(WorkloadNames).default(DEFAULT_WORKLOADS.join(',')),
  CONTENDERS: list(ContenderNames).default(DEFAULT_CONTENDERS.join(',')),
  // The naive poller (seed 003, solution 1): a cron every minute, 50 s at most per run.
  POLL_INTERVAL_S: z.coerce.number().positive().default(60),
  POLL_MAX_RUN_S: z.coerce.number().positive().default(50),
  // Seconds between writing and T; default: enough for the stream to schedule N rows first.
  LEAD_S: z.coerce.number().positive().optional(),
  // steady: how far ahead of its due time a row is written.
  STEADY_LEAD_S: z.coerce.number().positive().default(5),
  // The scanner contender, lifted from its safety-net defaults (grace 60 s, passes every 30 s, 5 pages/s).
  SCANNER_GRACE_MS: z.coerce.number().int().min(0).default(0),
  SCANNER_INTERVAL_MS: z.coerce.number().int().min(100).default(1_000),
  SCANNER_PPS: z.coerce.number().positive().max(1_000).default(1_000),
  // mixed, stream: partitions of the minute ring and the due lane (local.json has 4; production 16).
  MIXED_PARTITIONS: z.coerce.number().int().min(1).optional(),
  // stream: expirer processes (scale-out); each takes a share of the rings' partitions.
  EXPIRERS: z.coerce.number().int().min(1).max(16).default(1),
  // Rounds: every contender runs once per round, the order alternating (compare/repeats.ts); medians are quoted.
  RUNS: z.coerce.number().int().min(1).max(9).default(3),
  // Before round 1, each contender once on a fifth of the rows (at least 1,000), not counted: a
  // stack just started runs its first minutes cold (JIT, buffer pool, new log segments). 0: none.
  WARMUP: z.coerce.number().int().min(0).max(1).default(1),
  // Pause the stack's own connectors for the bench (resumed at its end): they would only read the
  // runs' binlog to drop it. 0 (the smoke preset): left alone, for a stack other tests are using.
  PAUSE_CONNECTORS: z.coerce.number().int().min(0).max(1).default(1),
  // Before each run, at most this long waiting for the machine to be quiet again (lib/settle.ts); 0: no wait.
  SETTLE_S: z.coerce.number().min(0).default(180),
  // A run with no progress this long, or not done within TIMEOUT_S, is recorded as failed.
  STALL_S: z.coerce.number().positive().default(300),
  TIMEOUT_S: z.coerce.number().positive().default(3_600),
  BENCH_RESULTS_DIR: z.string().min(1).optional(),
  // isolation: the open-loop foreground (lib/foreground.ts): requests a second, its users, and
  // how long it runs alone (before the contender starts) for its baseline.
  FOREGROUND_RATE: z.coerce.number().positive().max(5_000).default(200),
  FOREGROUND_USERS: z.coerce.number().int().min(1).default(1_000),
  FOREGROUND_ALONE_S: z.coerce.number().positive().default(20),
});

export type BenchParams = Readonly<{
  n: number;
  ratePerSecond: number;
  minutes: number;
  workloads: readonly WorkloadName[];
  contenders: readonly ContenderName[];
  pollIntervalS: number;
  pollMaxRunS: number;
  leadS: number | undefined;
  steadyLeadS: number;
  scanner: Readonly<{ graceMs: number; intervalMs: number; maxPagesPerSecond: number }>;
  mixedPartitions: number | undefined;
  expirers: number;
  runs: number;
  warmup: boolean;
  pauseConnectors: boolean;
  settleS: number;
  stallS: number;
  timeoutS: number;
  resultsDir: string | undefined;
  foreground: Readonly<{ rate: number; users: number; aloneS: number }>;
  preset: 'full' | 'smoke';
}>;

// About two minutes for all twelve runs, most of it the stream's three processes starting, three times.
const SMOKE: Readonly<Record<string, string>> = {
  N: '300',
  R: '50',
  M: '0.1',
  POLL_INTERVAL_S: '2',
  LEAD_S: '2',
  STEADY_LEAD_S: '2',
  STALL_S: '60',
  TIMEOUT_S: '120',
  SETTLE_S: '0',
  RUNS: '1',
  WARMUP: '0',
  PAUSE_CONNECTORS: '0',
};

export function readParams(env: NodeJS.ProcessEnv): BenchParams {
  const preset = env['BENCH_PRESET'] === 'smoke' ? 'smoke' : 'full';
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const e = EnvSchema.parse(preset === 'smoke' ? { ...SMOKE, ...given } : given);
  return {
    n: e.N,
    ratePerSecond: e.R,
    minutes: e.M,
    workloads: e.WORKLOADS,
    contenders: e.CONTENDERS,
    pollIntervalS: e.POLL_INTERVAL_S,
    pollMaxRunS: e.POLL_MAX_RUN_S,
    leadS: e.LEAD_S,
    steadyLeadS: e.STEADY_LEAD_S,
    scanner: { graceMs: e.SCANNER_GRACE_MS, intervalMs: e.SCANNER_INTERVAL_MS, maxPagesPerSecond: e.SCANNER_PPS },
    mixedPartitions: e.MIXED_PARTITIONS,
    expirers: e.EXPIRERS,
    runs: e.RUNS,
    warmup: e.WARMUP === 1,
    pauseConnectors: e.PAUSE_CONNECTORS === 1,
    settleS: e.SETTLE_S,
    stallS: e.STALL_S,
    timeoutS: e.TIMEOUT_S,
    resultsDir: e.BENCH_RESULTS_DIR,
    foreground: { rate: e.FOREGROUND_RATE, users: e.FOREGROUND_USERS, aloneS: e.FOREGROUND_ALONE_S },
    preset,
  };
}
