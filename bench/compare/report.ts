/** The results file and the Markdown table printed at the end of `make bench`. */
import type { PhaseCost } from './cost';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MachineInfo } from '../lib/machine';
import type { BenchParams, WorkloadName } from './params';
import type { RunResult } from './run-result';
import { formatSpread, mediansOf, spreadOf, type ContenderMedians, type Spread } from './repeats';

export type Ratios = Readonly<{
  workload: WorkloadName;
  /** The round (1…RUNS) whose runs these ratios compare. */
  round: number;
  /** stream transitions/s ÷ raw transitions/s: how much of the machine's SQL ceiling the stream reaches. */
  stream_over_raw_throughput: number | null;
  /** poller P99 delay ÷ stream P99 delay: how much later the naive poller's slowest rows are. */
  poller_p99_over_stream_p99: number | null;
  /** The machine's CPU per transition from T to the last transition, stream ÷ raw (target: at most 1.5). */
  stream_over_raw_machine_cpu: number | null;
  /** The same without the bench's own process (for the stream, its reading every event back). */
  stream_over_raw_machine_less_bench_cpu: number | null;
  /** The stream's publish tail as a share of its drain (T to the last transition; target: at most 0.15). */
  stream_publish_tail_share: number | null;
  /** The stream's P99 delay minus raw's, ms (steady; target: at most 100). */
  stream_minus_raw_p99_ms: number | null;
}>;

export type BenchResults = Readonly<{
  bench: 'compare';
  started_at: string;
  finished_at: string;
  parameters: Record<string, unknown>;
  machine: MachineInfo;
  /** Rows examined per second with no bench running, measured first: the noise under that figure. */
  baseline: Readonly<{ seconds: number; rows_examined_per_second: number }>;
  runs: readonly RunResult[];
  /** Per workload and round. */
  ratios: readonly Ratios[];
  /** Per workload and contender over the rounds (repeats.ts). */
  medians: readonly ContenderMedians[];
  /** Per workload: each ratio's median over the rounds, and its spread. */
  ratio_medians: readonly RatioMedians[];
}>;

export type RatioMedians = Readonly<{ workload: WorkloadName } & { [K in Exclude<keyof Ratios, 'workload' | 'round'>]: Spread | null }>;

/** Each ratio's median over the rounds. */
export function ratioMediansOf(ratios: readonly Ratios[]): RatioMedians[] {
  const workloads = [...new Set(ratios.map((r) => r.workload))];
  return workloads.map((workload) => {
    const of = ratios.filter((r) => r.workload === workload);
    const pick = (k: Exclude<keyof Ratios, 'workload' | 'round'>) => spreadOf(of.map((r) => r[k]));
    return {
      workload,
      stream_over_raw_throughput: pick('stream_over_raw_throughput'),
      poller_p99_over_stream_p99: pick('poller_p99_over_stream_p99'),
      stream_over_raw_machine_cpu: pick('stream_over_raw_machine_cpu'),
      stream_over_raw_machine_less_bench_cpu: pick('stream_over_raw_machine_less_bench_cpu'),
      stream_publish_tail_share: pick('stream_publish_tail_share'),
      stream_minus_raw_p99_ms: pick('stream_minus_raw_p99_ms'),
    };
  });
}

/** Everything the results file derives from the runs: ratios per round, their medians, each contender's medians. */
export function summaryOf(params: BenchParams, runs: readonly RunResult[]): Pick<BenchResults, 'ratios' | 'medians' | 'ratio_medians'> {
  // Round 0 is the warm-up: kept in runs[], in no median.
  const counted = runs.filter((r) => r.round >= 1);
  const rounds = [...new Set(counted.map((r) => r.round))].sort((a, b) => a - b);
  const ratios = rounds.flatMap((round) =>
    ratiosOf(
      params,
      counted.filter((r) => r.round === round),
    ).map((x) => ({ ...x, round })),
  );
  return { ratios, medians: mediansOf(counted), ratio_medians: ratioMediansOf(ratios) };
}

/** The ratios of one round's runs (the round is set by summaryOf). */
export function ratiosOf(params: BenchParams, runs: readonly RunResult[]): Array<Omit<Ratios, 'round'>> {
  const find = (w: WorkloadName, c: string) => runs.find((r) => r.workload === w && r.contender === c && r.ok);
  const ratio = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null || b === 0 ? null : Math.round((a / b) * 1000) / 1000);
  return params.workloads.map((w) => ({
    workload: w,
    stream_over_raw_throughput: ratio(find(w, 'stream')?.transitions_per_second, find(w, 'raw')?.transitions_per_second),
    poller_p99_over_stream_p99: ratio(find(w, 'poller')?.delay_ms?.p99, find(w, 'stream')?.delay_ms?.p99),
    stream_over_raw_machine_cpu: ratio(
      find(w, 'stream')?.cost?.expire?.machine_cpu_us_per_transition,
      find(w, 'raw')?.cost?.expire?.machine_cpu_us_per_transition,
    ),
    stream_over_raw_machine_less_bench_cpu: ratio(
      find(w, 'stream')?.cost?.expire?.machine_less_bench_cpu_us_per_transition,
      find(w, 'raw')?.cost?.expire?.machine_less_bench_cpu_us_per_transition,
    ),
    stream_publish_tail_share: ratio(find(w, 'stream')?.cost?.publish_tail_s, lastTransitionSinceT(find(w, 'stream'))),
    stream_minus_raw_p99_ms: difference(find(w, 'stream')?.delay_ms?.p99, find(w, 'raw')?.delay_ms?.p99),
  }));
}

/** Seconds from T to the run's last transition (its drain, for the hot and mixed workloads). */
function lastTransitionSinceT(r: RunResult | undefined): number | null {
  if (r === undefined || r.due_from === null || r.due_until === null || r.last_transition_s === null) return null;
  return (Date.parse(r.due_until) - Date.parse(r.due_from)) / 1000 + r.last_transition_s;
}

function difference(a: number | null | undefined, b: number | null | undefined): number | null {
  return a == null || b == null ? null : Math.round(a - b);
}

/** `<started_at>.json` (every figure) and `<started_at>.md` (the table printed at the end); the JSON's path. */
export function writeResults(dir: string, results: BenchResults): string {
  mkdirSync(dir, { recursive: true });
  // Colons are legal on Linux but not everywhere a results file may be copied to.
  const base = join(dir, results.started_at.replace(/:/g, '-'));
  writeFileSync(`${base}.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${base}.md`, `${markdownTable(results)}\n`);
  return `${base}.json`;
}

const dash = '–';
const num = (x: number | null | undefined, digits = 0) =>
  x == null ? dash : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** Delays span milliseconds (raw) to minutes (poller): ms below a second, seconds above. */
const delay = (ms: number | null | undefined) => (ms == null ? dash : ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

/** A phase's CPU per transition: the contender's own processes, every listed process, the machine, and the idle share. */
function phase(c: PhaseCost | null | undefined, ownNames: readonly string[]): string {
  if (c == null) return dash;
  const own = ownNames.reduce((s, n) => s + (c.cpu_us_per_transition[n] ?? 0), 0);
  const idle = c.machine_idle_share == null ? dash : `${Math.round(c.machine_idle_share * 100)} %`;
  return `${num(own)} / ${num(c.processes_cpu_us_per_transition)} / ${num(c.machine_cpu_us_per_transition)} (${idle})`;
}

export function markdownTable(results: BenchResults): string {
  const header = [
    'workload',
    'contender',
    'round',
    'exact',
    'transitions/s',
    'delay P50',
    'P95',
    'P99',
    'max',
    'last transition (s)',
    'last event (s)',
    'events/s',
    'rows examined / transition',
    'binlog bytes / transition',
    'CPU s (own)',
    'peak RSS MB (own)',
    'CPU s database',
    'CPU s Kafka',
    'CPU s Connect',
    'CPU µs / transition T → last transition: own / all / machine (idle)',
    'publish tail (s)',
    'CPU µs / transition in the tail: own / all / machine (idle)',
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const r of results.runs) {
    const own = r.processes.filter((p) => p.kind === 'contender');
    const stackCpu = (name: string) => r.processes.find((p) => p.kind === 'stack' && p.name === name)?.cpu_seconds;
    const ownCpu = own.reduce((s, p) => s + (p.cpu_seconds ?? 0), 0);
    const ownRss = own.map((p) => p.peak_rss_mb ?? 0);
    lines.push(
      `| ${[
        r.workload,
        r.contender,
        r.round,
        r.ok ? 'yes' : r.error ? `FAILED: ${r.error}` : 'NO',
        num(r.transitions_per_second),
        delay(r.delay_ms?.p50),
        delay(r.delay_ms?.p95),
        delay(r.delay_ms?.p99),
        delay(r.delay_ms?.max),
        num(r.last_transition_s, 1),
        num(r.last_event_s, 1),
        num(r.events_per_second),
        num(r.rows_examined_per_transition, 1),
        num(r.binlog_bytes_per_transition),
        own.length === 0 ? dash : num(ownCpu, 1),
        own.length === 0 ? dash : `${ownRss.map((x) => num(x)).join(' + ')}`,
        // Server 1, whichever it runs (TB_DB_FLAVOUR: mariadb or mysql).
        num(stackCpu('mariadb') ?? stackCpu('mysql'), 1),
        num(stackCpu('kafka'), 1),
        num(stackCpu('connect'), 1),
        phase(
          r.cost?.expire,
          own.map((p) => p.name),
        ),
        num(r.cost?.publish_tail_s, 1),
        phase(
          r.cost?.publish,
          own.map((p) => p.name),
        ),
      ].join(' | ')} |`,
    );
  }
  const ratioLines = results.ratio_medians.map(
    (x) =>
      `- ${x.workload}, median over rounds: stream/raw throughput ${formatSpread(x.stream_over_raw_throughput, 2)}; machine CPU per transition T → last transition, stream/raw ${formatSpread(x.stream_over_raw_machine_cpu, 2)}, ` +
      `without the bench's own process ${formatSpread(x.stream_over_raw_machine_less_bench_cpu, 2)}; ` +
      `publish tail / drain ${formatSpread(x.stream_publish_tail_share, 2)}; P99 stream − raw ${formatSpread(x.stream_minus_raw_p99_ms)} ms; poller P99 / stream P99 ${formatSpread(x.poller_p99_over_stream_p99, 1)}`,
  );
  const m = results.machine;
  const notes = results.runs.flatMap((r) => r.notes.map((n) => `- ${r.workload} × ${r.contender}: ${n}`));
  const scanner = results.parameters['scanner'] as { grace_ms: number; interval_ms: number; max_pages_per_second: number } | undefined;
  const poller = results.parameters['poller'] as { interval_s: number } | undefined;
  return [
    `### timebucket side by side — ${results.started_at} (${m.cores} cores, ${m.ram_gb} GB, node ${m.node}, ${m.git_commit?.slice(0, 10) ?? 'no commit'})`,
    '',
    ...mediansTable(results.medians),
    ...lines,
    '',
    ...foregroundTable(results.runs),
    ...pacingLines(results.runs),
    ...earliestLines(results.runs),
    ...ratioLines,
    ...(poller ? [`- poller: a scan every ${poller.interval_s} s (seed 003's cron), T in the middle of its period`] : []),
    ...(scanner
      ? [
          `- scanner: grace ${scanner.grace_ms} ms, a pass every ${scanner.interval_ms} ms, ${scanner.max_pages_per_second} pages/s; its defaults are grace 60 s, a pass every 30 s, 5 pages/s`,
        ]
      : []),
    `- background: ${num(results.baseline.rows_examined_per_second)} rows examined per second before the runs (load average ${m.load_average_1m})`,
    ...notes,
    '',
  ].join('\n');
}

/** isolation: the foreground's latency per phase, each request counted from its scheduled start. */
function foregroundTable(runs: readonly RunResult[]): string[] {
  const rows = runs.flatMap((r) =>
    (r.foreground ?? []).map(
      (p) =>
        `| ${[r.workload, r.contender, p.phase, num(p.seconds, 1), num(p.all.count), num(p.all.errors), ms(p.all.p50_ms), ms(p.all.p99_ms), ms(p.all.p999_ms), ms(p.all.max_ms)].join(' | ')} |`,
    ),
  );
  if (rows.length === 0) return [];
  const ratios = runs.flatMap((r) => {
    const of = (phase: string) => r.foreground?.find((p) => p.phase === phase)?.all;
    const alone = of('alone');
    const drain = of('drain');
    if (alone === undefined || drain === undefined) return [];
    return [
      `- ${r.workload} × ${r.contender}: foreground P99 during the drain ${ms(drain.p99_ms)} = ${alone.p99_ms === 0 ? '–' : num(drain.p99_ms / alone.p99_ms, 2)} × alone (${ms(alone.p99_ms)}); ${drain.errors} errors`,
    ];
  });
  const replicas = runs.flatMap((r) =>
    r.replica === null
      ? []
      : [
          `- ${r.workload} × ${r.contender}, the replica: lag max ${num(r.replica.lag_max_ms)} ms, P99 ${num(r.replica.lag_p99_ms)} ms (${r.replica.lag_samples} samples); ` +
            `${r.replica.stale_rows} rows read ACTIVE there after the primary had expired them, in ${r.replica.replica_reads} wallet reads`,
        ],
  );
  const header = ['workload', 'contender', 'foreground phase', 's', 'requests', 'errors', 'P50', 'P99', 'P99.9', 'max'];
  const lines = [...ratios, ...replicas];
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows, '', ...lines, ...(lines.length > 0 ? [''] : [])];
}

/** Each run's earliest transition against its row's due time (by the database's clocks): none early is the invariant. */
function earliestLines(runs: readonly RunResult[]): string[] {
  const lines = runs.flatMap((r) => {
    const min = r.delay_ms?.min;
    if (min === undefined) return [];
    return [`- ${r.workload} × ${r.contender}: earliest transition ${num(min)} ms after its due time${min < 0 ? ' — EARLY' : ', none early'}`];
  });
  return lines.length === 0 ? [] : [...lines, ''];
}

/** The stream's pacers per run (contenders/pacing-watch.ts): seconds per state and per limiting signal. */
function pacingLines(runs: readonly RunResult[]): string[] {
  const lines = runs.flatMap((r) => {
    if (!r.pacing || r.pacing.samples === 0) return [];
    const seconds = (o: Readonly<Record<string, number>>) =>
      Object.entries(o)
        .map(([k, v]) => `${k} ${v} s`)
        .join(', ') || 'none';
    return [
      `- ${r.workload} × ${r.contender}, its pacers (${r.pacing.samples} samples): states ${seconds(r.pacing.states)}; held back by ${seconds(r.pacing.limitedBy)}; lowest rate ${r.pacing.minRate === null ? 'never paced' : `${num(r.pacing.minRate)} rows/s`}`,
    ];
  });
  return lines.length === 0 ? [] : [...lines, ''];
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

/**
 * The medians of the rounds, first: what to quote. CPU per transition from T to the last
 * transition, by process (the database server, Connect, Kafka, the contender's own), and what
 * the machine spent that no listed process accounts for.
 */
function mediansTable(medians: readonly ContenderMedians[]): string[] {
  if (medians.every((m) => m.runs <= 1)) return [];
  const header = [
    'workload',
    'contender',
    'ok / runs',
    'transitions/s',
    'delay P99 ms',
    'machine CPU µs / transition',
    'by process, µs / transition',
    'unaccounted µs',
    'publish tail s',
  ];
  const rows = medians.map((m) => {
    const byProcess = Object.entries(m.cpu_us_per_transition)
      .filter(([, s]) => s !== null && s.median >= 1)
      .sort(([, a], [, b]) => b!.median - a!.median)
      .map(([name, s]) => `${name} ${formatSpread(s)}`)
      .join('; ');
    return `| ${[
      m.workload,
      m.contender,
      `${m.ok} / ${m.runs}`,
      formatSpread(m.transitions_per_second),
      formatSpread(m.delay_p99_ms),
      formatSpread(m.machine_cpu_us_per_transition),
      formatSpread(m.machine_less_bench_cpu_us_per_transition),
      byProcess || '–',
      formatSpread(m.unaccounted_cpu_us_per_transition),
      formatSpread(m.publish_tail_s, 1),
    ].join(' | ')} |`;
  });
  return [
    `Medians of the rounds (min–max, spread = (max − min) / median):`,
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows,
    '',
    'Every run:',
    '',
  ];
}
