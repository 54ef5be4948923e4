/**
 * The bench's headline figures over repeated runs: each contender runs RUNS times (default 3),
 * its order alternating from one round to the next (raw, stream; stream, raw; …) so a warm or
 * cold machine favours neither. Per workload and contender: the median of the ok runs and their
 * spread, (max − min) / median; a spread over SPREAD_LIMIT is printed as such, since a figure that
 * moves that much between runs is not one to plan with. Ratios (stream ÷ raw) are taken round by
 * round, then their median: each pair ran minutes apart on the same machine state.
 */
import type { RunResult } from './run-result';
import type { WorkloadName } from './params';

export const SPREAD_LIMIT = 0.15;

/** The contenders' order in a round (1-based): as given in odd rounds, reversed in even ones. */
export function roundOrder<T>(contenders: readonly T[], round: number): readonly T[] {
  return round % 2 === 1 ? contenders : [...contenders].reverse();
}

export type Spread = Readonly<{ median: number; min: number; max: number; spread: number; runs: number }>;

/** Median and spread of the values present; null when there are none. */
export function spreadOf(values: ReadonlyArray<number | null | undefined>): Spread | null {
  const xs = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = Math.floor(xs.length / 2);
  const median = xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
  const min = xs[0]!;
  const max = xs[xs.length - 1]!;
  return { median: round3(median), min: round3(min), max: round3(max), spread: median === 0 ? 0 : round3((max - min) / Math.abs(median)), runs: xs.length };
}

export type ContenderMedians = Readonly<{
  workload: WorkloadName;
  contender: string;
  runs: number;
  ok: number;
  transitions_per_second: Spread | null;
  delay_p99_ms: Spread | null;
  /** T → the last transition: the machine's CPU per transition, and each process's (by name). */
  machine_cpu_us_per_transition: Spread | null;
  /** The same without the bench's own process (cost.ts BENCH_PROCESS). */
  machine_less_bench_cpu_us_per_transition: Spread | null;
  cpu_us_per_transition: Readonly<Record<string, Spread | null>>;
  /** The machine's CPU no listed process accounts for (kernel threads, interrupts, other processes). */
  unaccounted_cpu_us_per_transition: Spread | null;
  publish_tail_s: Spread | null;
}>;

export function mediansOf(runs: readonly RunResult[]): ContenderMedians[] {
  const groups = new Map<string, RunResult[]>();
  for (const r of runs) {
    const key = `${r.workload}\u0000${r.contender}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((all) => {
    const ok = all.filter((r) => r.ok);
    const expire = ok.map((r) => r.cost?.expire ?? null);
    const names = [...new Set(expire.flatMap((c) => (c === null ? [] : Object.keys(c.cpu_us_per_transition))))];
    return {
      workload: all[0]!.workload,
      contender: all[0]!.contender,
      runs: all.length,
      ok: ok.length,
      transitions_per_second: spreadOf(ok.map((r) => r.transitions_per_second)),
      delay_p99_ms: spreadOf(ok.map((r) => r.delay_ms?.p99)),
      machine_cpu_us_per_transition: spreadOf(expire.map((c) => c?.machine_cpu_us_per_transition)),
      machine_less_bench_cpu_us_per_transition: spreadOf(expire.map((c) => c?.machine_less_bench_cpu_us_per_transition)),
      cpu_us_per_transition: Object.fromEntries(names.map((n) => [n, spreadOf(expire.map((c) => c?.cpu_us_per_transition[n]))])),
      unaccounted_cpu_us_per_transition: spreadOf(
        expire.map((c) =>
          c === null || c.machine_cpu_us_per_transition === null ? null : c.machine_cpu_us_per_transition - c.processes_cpu_us_per_transition,
        ),
      ),
      publish_tail_s: spreadOf(ok.map((r) => r.cost?.publish_tail_s)),
    };
  });
}

/** "5,494 (4,326–5,866, spread 30 % — over 15 %)" */
export function formatSpread(s: Spread | null, digits = 0): string {
  if (s === null) return '–';
  const num = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  if (s.runs === 1) return num(s.median);
  const flag = s.spread > SPREAD_LIMIT ? ` — over ${Math.round(SPREAD_LIMIT * 100)} %` : '';
  return `${num(s.median)} (${num(s.min)}–${num(s.max)}, spread ${Math.round(s.spread * 100)} %${flag})`;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
