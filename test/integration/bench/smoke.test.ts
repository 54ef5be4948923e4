/**
 * `make bench-smoke` as a test: the side-by-side bench (bench/compare) at toy size, run as a
 * child process exactly as the Makefile runs it, against the real stack. It checks that the
 * harness works end to end and that every contender on every workload transitioned every row
 * exactly once (one outbox row per row, the held coupons of `mixed` released, not expired), and
 * that the results file has its shape. Never a time or a speed: those belong to `make bench`
 * on a quiet machine.
 *
 * The harness's output goes to .stack/reports/logs/smoke.test.ts.log; its results and the
 * contenders' logs to a temporary directory, not bench/results.
 *
 * Every run has a database of its own (the stream's captured by connectors of its own), and the
 * smoke preset leaves the stack's connectors running (PAUSE_CONNECTORS=0): it disturbs no other
 * file. (The pause itself: pause-connectors.test.ts.)
 *
 * @lane isolated
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

const root = join(__dirname, '../../..');
// Where every integration test's logs go (test/support/stack.ts), so a failure's output is one file away.
const testLogFile = join(root, '.stack/reports/logs', `${basename(__filename)}.log`);
const WORKLOADS = ['hot', 'steady', 'mixed'];
const CONTENDERS = ['raw', 'poller', 'scanner', 'stream'];

/** Runs a command in the repository root; resolves with its exit code and output. */
function run(cmd: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

type Run = {
  workload: string;
  contender: string;
  ok: boolean;
  error: string | null;
  transitions_expected: number;
  transitions: number;
  events: number | null;
  delay_ms: { min: number; p50: number; p95: number; p99: number; max: number } | null;
  processes: Array<{ name: string; kind: string; pid: number; cpu_seconds: number | null; peak_rss_mb: number | null }>;
  exactness: {
    ok: boolean;
    expected: { coupon: number; order: number; released: number };
    transitioned: { coupon: number; order: number };
    missed: number;
    released: number;
    outbox: { coupon: { rows: number; distinctRows: number }; order: { rows: number; distinctRows: number } };
    couponReleasedEvents: number;
  };
  [figure: string]: unknown;
};

const resultsDir = mkdtempSync(join(tmpdir(), 'tb-bench-smoke-'));
let harness: { code: number | null; out: string; err: string };
let results: {
  bench: string;
  parameters: Record<string, unknown>;
  machine: Record<string, unknown>;
  runs: Run[];
  ratios: unknown[];
  medians: unknown[];
  ratio_medians: unknown[];
};

beforeAll(async () => {
  // The bench runs compiled, as `make bench-smoke` runs it: compile it (and the src it imports).
  const build = await run('npx', ['tsc', '-p', 'tsconfig.bench.json'], {});
  if (build.code !== 0) throw new Error(`tsc -p tsconfig.bench.json failed:\n${build.out}${build.err}`);
  harness = await run(process.execPath, ['dist-bench/bench/compare/main.js'], { BENCH_PRESET: 'smoke', BENCH_RESULTS_DIR: resultsDir, TB_LOG_LEVEL: 'warn' });
  mkdirSync(dirname(testLogFile), { recursive: true });
  writeFileSync(
    testLogFile,
    `exit code ${harness.code}\n--- stdout\n${harness.out}\n--- stderr\n${harness.err}${harness.code === 0 ? '' : contenderLogTails()}`,
  );
  const files = readdirSync(resultsDir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) throw new Error(`expected one results file in ${resultsDir}, found ${files.length}; harness stderr:\n${harness.err.slice(-4000)}`);
  results = JSON.parse(readFileSync(join(resultsDir, files[0]!), 'utf8')) as typeof results;
}, 420_000);

afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

/** The end of every contender process's log (deleted with the results directory): why a run failed. */
function contenderLogTails(): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.log')) found.push(path);
    }
  };
  walk(resultsDir);
  return found.map((f) => `\n--- ${basename(f)} (last 40 lines)\n${readFileSync(f, 'utf8').split('\n').slice(-40).join('\n')}`).join('');
}

test('the harness exits 0 and prints the Markdown table', () => {
  expect({ code: harness.code, stderrTail: harness.code === 0 ? '' : harness.err.slice(-4000) }).toEqual({ code: 0, stderrTail: '' });
  expect(harness.out).toMatch(/^\| workload \| contender \| round \| exact \| transitions\/s \|/m);
  for (const w of WORKLOADS) for (const c of CONTENDERS) expect(harness.out).toMatch(new RegExp(`^\\| ${w} \\| ${c} \\| 1 \\| yes \\|`, 'm'));
});

test('the table is kept beside the results file, as printed', () => {
  const tables = readdirSync(resultsDir).filter((f) => f.endsWith('.md'));
  expect(tables).toHaveLength(1);
  const table = readFileSync(join(resultsDir, tables[0]!), 'utf8');
  expect(table).toMatch(/^\| workload \| contender \| round \| exact \| transitions\/s \|/m);
  expect(harness.out).toContain(table.trimEnd());
});

test('the results file holds the parameters, the machine and one run per workload and contender', () => {
  expect(results.bench).toBe('compare');
  expect(results.parameters).toMatchObject({ preset: 'smoke', workloads: WORKLOADS, contenders: CONTENDERS });
  expect(results.machine).toEqual(
    expect.objectContaining({ cores: expect.any(Number), ram_gb: expect.any(Number), node: expect.any(String), git_commit: expect.anything() }),
  );
  expect(results.runs.map((r) => `${r.workload}/${r.contender}`)).toEqual(WORKLOADS.flatMap((w) => CONTENDERS.map((c) => `${w}/${c}`)));
  expect(results.ratios).toHaveLength(WORKLOADS.length);
  expect(results.ratio_medians).toHaveLength(WORKLOADS.length);
  expect(results.medians).toHaveLength(WORKLOADS.length * CONTENDERS.length);
  for (const r of results.runs) {
    const numbers = ['transitions_per_second', 'last_transition_s', 'rows_examined', 'rows_examined_per_transition', 'binlog_bytes_per_transition'];
    for (const figure of numbers)
      expect({ run: `${r.workload}/${r.contender}`, figure, type: typeof r[figure] }).toEqual({ run: `${r.workload}/${r.contender}`, figure, type: 'number' });
    expect(r.delay_ms).toEqual({ min: expect.any(Number), p50: expect.any(Number), p95: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) });
    // None early: the earliest transition is at or after its row's due time.
    expect(r.delay_ms!.min).toBeGreaterThanOrEqual(0);
    const own = r.processes.filter((p) => p.kind === 'contender');
    expect(own.length).toBe(r.contender === 'stream' ? 3 : 1);
    for (const p of own) expect(p).toEqual(expect.objectContaining({ cpu_seconds: expect.any(Number), peak_rss_mb: expect.any(Number) }));
    // Events are the stream's alone: nothing else publishes. The outbox connector routes each
    // row to the topic it names, so every event of the run reaches the run's own topics.
    const eventFigures = [r.events, r['events_per_second'], r['last_event_s']];
    if (r.contender !== 'stream') expect(eventFigures).toEqual([null, null, null]);
    else eventFigures.forEach((x) => expect(typeof x).toBe('number'));
  }
});

test('every contender transitioned every row exactly once, on every workload', () => {
  for (const r of results.runs) {
    const e = r.exactness.expected;
    const rows = e.coupon + e.order;
    expect({ run: `${r.workload}/${r.contender}`, ok: r.ok, error: r.error }).toEqual({ run: `${r.workload}/${r.contender}`, ok: true, error: null });
    expect(rows).toBeGreaterThan(0);
    expect(r.transitions_expected).toBe(rows);
    expect(r.transitions).toBe(rows);
    expect(r.exactness).toEqual({
      ok: true,
      expected: e,
      transitioned: { coupon: e.coupon, order: e.order },
      missed: 0,
      released: e.released,
      // One outbox row per row, each naming a different row.
      outbox: { coupon: { rows: e.coupon, distinctRows: e.coupon }, order: { rows: e.order, distinctRows: e.order } },
      couponReleasedEvents: e.released,
    });
    if (r.workload === 'mixed') expect(e.order * e.coupon * e.released).toBeGreaterThan(0);
    // The stream's events, read back from its event topics (bench/compare/contenders/event-follower.ts
    // counts those whose event_key names a row of the run): each transition's once.
    if (r.contender === 'stream')
      expect({ run: `${r.workload}/${r.contender}`, events: r.events }).toEqual({ run: `${r.workload}/${r.contender}`, events: rows });
  }
});

test('each stream run captured a database of its own through connectors of its own, deleted afterwards', async () => {
  const streamRuns = results.runs.filter((r) => r.contender === 'stream');
  expect(streamRuns).toHaveLength(WORKLOADS.length);
  // Not the stack's captured database: the `make run` pipeline never sees a bench's rows.
  for (const r of streamRuns) expect(r['database']).toMatch(new RegExp(`^${process.env['TB_DB_NAME'] ?? 'timebucket'}_test_bench_`));
  const connect = `http://127.0.0.1:${process.env['TB_CONNECT_PORT'] ?? '18083'}`;
  const names = (await (await fetch(`${connect}/connectors`)).json()) as string[];
  expect(names.filter((name) => name.startsWith('tbbench'))).toEqual([]);
});
