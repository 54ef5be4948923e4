import { formatSpread, mediansOf, roundOrder, spreadOf } from '../../../bench/compare/repeats';
import type { RunResult } from '../../../bench/compare/run-result';

test('the order of the contenders alternates from round to round', () => {
  expect([1, 2, 3].map((round) => roundOrder(['raw', 'stream'], round))).toEqual([
    ['raw', 'stream'],
    ['stream', 'raw'],
    ['raw', 'stream'],
  ]);
});

test('median and spread over the values present', () => {
  expect(spreadOf([5494, 4326, 5866])).toEqual({ median: 5494, min: 4326, max: 5866, spread: 0.28, runs: 3 });
  expect(spreadOf([10, null, 20])).toEqual({ median: 15, min: 10, max: 20, spread: 0.667, runs: 2 });
  expect(spreadOf([null, undefined])).toBeNull();
});

test('a spread over 15 % is printed as such', () => {
  expect(formatSpread(spreadOf([100, 110, 105]))).toBe('105 (100–110, spread 10 %)');
  expect(formatSpread(spreadOf([5494, 4326, 5866]))).toBe('5,494 (4,326–5,866, spread 28 % — over 15 %)');
  expect(formatSpread(spreadOf([42]))).toBe('42');
});

function run(contender: 'raw' | 'stream', round: number, tps: number, machine: number, processes: Record<string, number>, ok = true): RunResult {
  const total = Object.values(processes).reduce((a, b) => a + b, 0);
  return {
    workload: 'hot',
    contender,
    round,
    ok,
    transitions_per_second: tps,
    delay_ms: null,
    cost: {
      expire: {
        seconds: 10,
        cpu_us_per_transition: processes,
        processes_cpu_us_per_transition: total,
        machine_cpu_us_per_transition: machine,
        machine_idle_share: 0,
      },
      publish: null,
      publish_tail_s: null,
    },
  } as unknown as RunResult;
}

test('medians per contender over the ok runs, with each process and the CPU no process accounts for', () => {
  const m = mediansOf([
    run('raw', 1, 10_000, 180, { raw: 25, mysql: 140 }),
    run('stream', 1, 5_000, 360, { expirer: 60, mysql: 150 }),
    run('stream', 2, 4_000, 470, { expirer: 70, mysql: 170 }),
    run('raw', 2, 11_000, 170, { raw: 23, mysql: 130 }),
    run('stream', 3, 1, 9_999, { expirer: 1, mysql: 1 }, false),
    run('raw', 3, 12_000, 190, { raw: 24, mysql: 150 }),
  ]);
  expect(m.map((x) => [x.contender, x.runs, x.ok, x.transitions_per_second?.median, x.machine_cpu_us_per_transition?.median])).toEqual([
    ['raw', 3, 3, 11_000, 180],
    ['stream', 3, 2, 4_500, 415],
  ]);
  expect(m[0]!.cpu_us_per_transition['mysql']).toEqual({ median: 140, min: 130, max: 150, spread: 0.143, runs: 3 });
  expect(m[0]!.unaccounted_cpu_us_per_transition?.median).toBe(16);
  expect(m[1]!.unaccounted_cpu_us_per_transition).toEqual({ median: 190, min: 150, max: 230, spread: 0.421, runs: 2 });
});
