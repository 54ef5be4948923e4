/**
 * The Grafana dashboard (k8s/grafana/timebucket.json): what it shows, and that every query reads
 * series timebucket serves (names checked against the metrics registry, without a Prometheus).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricsRead, servedMetricNames } from './metric-names';
import { repoRoot } from './tools';

type Panel = {
  id: number;
  title: string;
  description?: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: Array<{ refId: string; expr: string }>;
};
const dashboard = JSON.parse(readFileSync(join(repoRoot, 'k8s/grafana/timebucket.json'), 'utf8')) as { uid: string; panels: Panel[] };

test('one panel per question an operator asks, each explained', () => {
  const titles = dashboard.panels.map((p) => p.title).join('\n');
  for (const topic of [
    /delay/i,
    /transitions per second/i,
    /due lag/i,
    /CDC lag/i,
    /outbox/i,
    /dead letters/i,
    /scanner catches/i,
    /breakers/i,
    /group members/i,
  ])
    expect(titles).toMatch(topic);
  for (const p of dashboard.panels) {
    expect({ panel: p.title, described: (p.description ?? '').length > 10 }).toEqual({ panel: p.title, described: true });
    expect(p.targets.length).toBeGreaterThan(0);
  }
  expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
});

test('delay is shown as P50, P95 and P99', () => {
  const delay = dashboard.panels.find((p) => /delay/i.test(p.title))!;
  expect(delay.targets.map((t) => /histogram_quantile\((0\.\d+)/.exec(t.expr)?.[1])).toEqual(['0.5', '0.95', '0.99']);
});

test('every query reads series timebucket serves (a misspelled metric would draw an empty panel)', () => {
  const served = servedMetricNames();
  const read = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricsRead(t.expr)));
  expect(read.length).toBeGreaterThan(15);
  expect([...new Set(read)].filter((name) => !served.has(name))).toEqual([]);
});

test('panels do not overlap', () => {
  const cells = new Set<string>();
  for (const p of dashboard.panels) {
    for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x += 1) {
      for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y += 1) {
        expect(cells.has(`${x},${y}`)).toBe(false);
        cells.add(`${x},${y}`);
      }
    }
  }
});
