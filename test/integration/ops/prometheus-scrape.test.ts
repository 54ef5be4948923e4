/**
 * A real Prometheus (Debian's, unpacked by stack/install.sh) scraping a real `timebucket run`
 * with every role, with timebucket's alert rules loaded. Every query an operator depends on goes
 * through Prometheus's HTTP API and must return data: each alert expression (its left-hand side,
 * without the threshold; an absent() alert's selector), the KEDA trigger's query and every
 * dashboard panel's query. A misspelled metric or label, or a `by` label the series lack, fails
 * here; and every rule must evaluate without error.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { CliRun, freePort, spawnCli } from '../../support/cli';
import { waitFor } from '../../support/wait-for';
import { tool } from '../../deploy/tools';

const root = join(__dirname, '../../..');
const ruleSpec = parse(readFileSync(join(root, 'k8s/base/prometheus-rule.yaml'), 'utf8')) as {
  spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
};
type Sample = { metric: Record<string, string>; value: [number, string] };
type RuleState = { name: string; health: string; lastError?: string };

let pipeline: TestPipeline;
let run: CliRun;
let prometheus: ChildProcess;
let promPort: number;
let promLog = '';

async function query(expr: string): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; error?: string; data: { resultType: string; result: Sample[] } };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data.result;
}

/**
 * What an alert expression is compared on: `X > 5` → X, `A > 0 and B > 0` → A and B, `absent(S)`
 * → S, and a subquery's inner expression (`deriv(E[10m:1m])` → E: a Prometheus that started a
 * minute ago has no 10-minute history to run it over).
 */
function observed(expr: string): string[] {
  const absent = /^absent\((.*)\)$/s.exec(expr.trim());
  if (absent) return [absent[1]!];
  return expr
    .split(/\s+and\s+/)
    .map((part) => part.replace(/\s*(==|!=|>=|<=|>|<)\s*[\d.e+-]+\s*$/, '').trim())
    .map((part) => /^\w+\((.*)\[\d+[smhd]:\d+[smhd]\]\)$/s.exec(part)?.[1] ?? part);
}

/** The `by (...)` labels of an expression's outermost aggregation, which every result series must carry. */
function byLabels(expr: string): string[] {
  const m = /^\s*\w+\s+by\s*\(([^)]*)\)/.exec(expr);
  return m
    ? m[1]!
        .split(',')
        .map((l) => l.trim())
        .filter((l) => l.length > 0)
    : [];
}

beforeAll(async () => {
  pipeline = await createTestPipeline();
  const metricsPort = await freePort();
  run = spawnCli(['run'], { ...pipeline.env, TB_LOG_LEVEL: 'error', TB_HTTP_PORT: String(metricsPort) });
  await waitFor(
    'timebucket to serve /readyz',
    async () => ((await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => undefined))?.ok ? true : undefined),
    { timeoutMs: 90_000 },
  );

  const dir = mkdtempSync(join(tmpdir(), 'timebucket-prometheus-'));
  writeFileSync(join(dir, 'rules.yaml'), stringify(ruleSpec.spec));
  // As the PodMonitor labels the series: job="timebucket", the pod and its role group.
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: ['rules.yaml'],
      scrape_configs: [
        { job_name: 'timebucket', static_configs: [{ targets: [`127.0.0.1:${metricsPort}`], labels: { pod: 'timebucket-all-0', component: 'all' } }] },
      ],
    }),
  );
  promPort = await freePort();
  prometheus = spawn(
    tool('prometheus'),
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  prometheus.stderr!.on('data', (d: Buffer) => (promLog = (promLog + d.toString()).slice(-20_000)));
  await waitFor('Prometheus to scrape timebucket', async () => ((await query('up{job="timebucket"} == 1').catch(() => [])).length === 1 ? true : undefined), {
    timeoutMs: 60_000,
  });
  // rate() over a 1m window needs two samples; increase() too.
  await waitFor(
    'two scrapes of every series',
    async () => ((await query('count_over_time(timebucket_transitions_total[1m])').catch(() => [])).some((s) => Number(s.value[1]) >= 3) ? true : undefined),
    { timeoutMs: 30_000 },
  );
}, 180_000);

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  run?.child.kill('SIGTERM');
  await run?.exited;
  await pipeline?.stopAll();
});

const alertQueries = ruleSpec.spec.groups.flatMap((g) => g.rules.flatMap((r) => observed(r.expr).map((q) => [r.alert, q] as const)));
const keda = parse(readFileSync(join(root, 'k8s/base/scaledobject-expirer.yaml'), 'utf8')) as {
  spec: { triggers: Array<{ type: string; metadata: { query?: string } }> };
};
const kedaQuery = keda.spec.triggers.find((t) => t.type === 'prometheus')!.metadata.query!;
const dashboard = JSON.parse(readFileSync(join(root, 'k8s/grafana/timebucket.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};
const panelQueries = dashboard.panels.flatMap((p) => p.targets.map((t) => [p.title, t.expr] as const));

async function expectData(expr: string): Promise<void> {
  const result = await query(expr);
  expect({ expr, series: result.length > 0 }).toEqual({ expr, series: true });
  for (const label of byLabels(expr)) {
    expect({ expr, label, missing: result.filter((s) => !s.metric[label]).length }).toEqual({ expr, label, missing: 0 });
  }
}

test.each(alertQueries)('alert %s: %s returns data', async (_, expr) => {
  await expectData(expr);
});

test("the KEDA trigger's query returns the expirer's due lag", async () => {
  await expectData(kedaQuery);
});

test.each(panelQueries)('dashboard "%s": %s returns data', async (_, expr) => {
  await expectData(expr);
});

test('Prometheus evaluates every rule without error', async () => {
  await waitFor(
    'every rule evaluated',
    async () => {
      const res = (await (await fetch(`http://127.0.0.1:${promPort}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: RuleState[] }> } };
      const rules = res.data.groups.flatMap((g) => g.rules);
      return rules.length > 0 && rules.every((r) => r.health !== 'unknown') ? rules : undefined;
    },
    { timeoutMs: 30_000 },
  ).then((rules) => {
    expect(rules).toHaveLength(ruleSpec.spec.groups.flatMap((g) => g.rules).length);
    expect(rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`)).toEqual([]);
  });
});

test('a misspelled metric or label returns nothing (the checks above can fail)', async () => {
  expect(await query('sum(timebucket_due_lag_mesages)')).toEqual([]);
  const wrongLabel = await query('sum by (stag) (timebucket_due_lag_messages{job="timebucket"})');
  expect(wrongLabel.filter((s) => !s.metric['stag'])).toHaveLength(wrongLabel.length);
  expect(promLog).not.toMatch(/level=error/);
});
