/**
 * The alert rules (k8s/base/prometheus-rule.yaml) as Prometheus will read them: `promtool check
 * rules` on the PrometheusRule's spec, `promtool test rules` with k8s/tests/alerts.test.yaml
 * (every alert fired from synthetic series), and against the code and the docs: every metric
 * an expression reads is one timebucket registers, every runbook_url names a heading that exists.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { metricsRead, servedMetricNames } from './metric-names';
import { repoRoot, runTool } from './tools';

type Rule = { alert: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
const spec = (parse(readFileSync(join(repoRoot, 'k8s/base/prometheus-rule.yaml'), 'utf8')) as { spec: { groups: Array<{ name: string; rules: Rule[] }> } })
  .spec;
const rules = spec.groups.flatMap((g) => g.rules);
const dir = mkdtempSync(join(tmpdir(), 'timebucket-rules-'));
writeFileSync(join(dir, 'rules.yaml'), stringify(spec));
copyFileSync(join(repoRoot, 'k8s/tests/alerts.test.yaml'), join(dir, 'alerts.test.yaml'));

/** GitHub's anchor for a Markdown heading. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

test('promtool check rules accepts them', () => {
  expect(runTool('promtool', ['check', 'rules', 'rules.yaml'], dir)).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
});

test('promtool test rules: every case passes', () => {
  expect(runTool('promtool', ['test', 'rules', 'alerts.test.yaml'], dir)).toMatch(/SUCCESS/);
});

test('every alert is fired by at least one case, with its annotations', () => {
  const cases = (
    parse(readFileSync(join(dir, 'alerts.test.yaml'), 'utf8')) as {
      tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: Array<{ exp_annotations?: object }> }> }>;
    }
  ).tests;
  const fired = new Set(
    cases.flatMap((c) => c.alert_rule_test.filter((t) => t.exp_alerts.length > 0 && t.exp_alerts.every((a) => a.exp_annotations)).map((t) => t.alertname)),
  );
  expect(rules.map((r) => r.alert).filter((a) => !fired.has(a))).toEqual([]);
});

test('every alert has a severity, a summary, a description and a runbook that exists', () => {
  for (const r of rules) {
    expect({ alert: r.alert, severity: r.labels?.['severity'] }).toEqual({ alert: r.alert, severity: expect.stringMatching(/^(page|ticket)$/) });
    expect({ alert: r.alert, keys: Object.keys(r.annotations ?? {}).sort() }).toEqual({ alert: r.alert, keys: ['description', 'runbook_url', 'summary'] });
    const [file, section] = r.annotations!['runbook_url']!.split('#');
    const headings = readFileSync(join(repoRoot, file!), 'utf8')
      .split('\n')
      .filter((l) => /^#{1,4} /.test(l))
      .map((l) => anchor(l.replace(/^#+ /, '')));
    expect({ alert: r.alert, section: headings.includes(section!) ? section : `missing #${section} in ${file}` }).toEqual({ alert: r.alert, section });
  }
});

test('every metric an expression reads is registered by timebucket (a typo would leave an alert silent)', () => {
  const registered = servedMetricNames();
  const read = new Set(rules.flatMap((r) => metricsRead(r.expr)));
  expect(read.size).toBeGreaterThan(10);
  expect([...read].filter((name) => !registered.has(name))).toEqual([]);
});
