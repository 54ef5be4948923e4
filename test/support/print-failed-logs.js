// After a failed jest run: for each test file that failed, its failed tests with the start of
// their messages, and the last warnings and errors of the pipeline log it wrote
// (.stack/reports/logs/<file>.log, test/support/stack.ts), so a failure in CI can be read from
// the end of its output alone (jest's own account scrolls away above the other lanes' lines). Usage: node print-failed-logs.js <report.json> [lines]
const fs = require('node:fs');
const path = require('node:path');
const { stripVTControlCharacters } = require('node:util');

const [reportFile, lines = '40'] = process.argv.slice(2);
const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
// The logs sit beside the reports: <reports>/logs/<file>.log.
const logs = path.join(path.dirname(reportFile), 'logs');
// A failure message's first lines (the assertion and the test's own frames), indented.
const clip = (text, max) =>
  stripVTControlCharacters(text)
    .split('\n')
    .filter((l) => !/node_modules|node:internal/.test(l))
    .slice(0, max)
    .map((l) => `    ${l.slice(0, 300)}`)
    .join('\n');
for (const suite of report.testResults ?? []) {
  if (suite.status !== 'failed') continue;
  console.log(`--- FAIL ${path.relative(process.cwd(), suite.name)}`);
  if (suite.message && !(suite.assertionResults ?? []).some((a) => a.status === 'failed')) console.log(clip(suite.message, 30));
  for (const a of (suite.assertionResults ?? []).filter((x) => x.status === 'failed')) {
    console.log(`  ✕ ${a.fullName}`);
    for (const m of a.failureMessages ?? []) console.log(clip(m, 30));
  }
  const log = path.join(logs, `${path.basename(suite.name)}.log`);
  if (!fs.existsSync(log)) continue;
  // Warnings (40) and above, each cut to a readable width; the client library's own connection
  // errors (every broker restart logs dozens) only counted, so timebucket's lines are the ones seen.
  const warnings = fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => /"level":(4|5|6)0/.test(l));
  const own = warnings.filter((l) => !l.includes('"component":"kafkajs"'));
  const tail = own.slice(-Number(lines)).map((l) => l.slice(0, 400));
  console.log(`--- ${path.relative(process.cwd(), log)}: its last ${tail.length} warnings and errors (and ${warnings.length - own.length} of kafkajs's own)`);
  for (const l of tail) console.log(l);
  // kafkajs's own, one line per distinct message with its count and last time: a reader that
  // could not find its coordinator for a minute reads differently from one broker restart.
  const distinct = new Map();
  for (const l of warnings.filter((x) => x.includes('"component":"kafkajs"'))) {
    let entry;
    try {
      entry = JSON.parse(l);
    } catch {
      continue;
    }
    const what = `${entry.clientId ?? ''} ${entry.namespace ?? ''}: ${entry.error ?? ''} ${String(entry.msg ?? '').slice(0, 120)}`;
    distinct.set(what, { n: (distinct.get(what)?.n ?? 0) + 1, last: entry.time });
  }
  for (const [what, { n, last }] of [...distinct].slice(-Number(lines))) console.log(`  kafkajs ×${n} (last ${last}) ${what}`);
}
