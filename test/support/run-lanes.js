// Runs a jest project's test files in lanes, so files that cannot disturb each other run side by
// side instead of one after the other. Each file names its lane in its first docblock:
//
//   (no pragma)        `captured`: writes to or reads the changes of the captured database (its
//                      pipelines route every row of `timebucket`, and would expire another file's
//                      rows): one file at a time.
//   @lane captured-2   the same, on a second captured database: a database of the run's own,
//                      migrated, with a Debezium connector of its own as `timebucket connector
//                      config` prints it (TB_DB_NAME and TB_CDC_TOPIC_PREFIX point the lane's
//                      tests at them). One file at a time, beside the captured lane; the database
//                      and the connector are removed afterwards.
//   @lane isolated     a database of the file's own (or none) and topics of its own: runs
//                      beside anything but the exclusive files.
//   @lane exclusive    stops, kills or freezes a part of the stack (Connect, the registry, the
//                      broker, the application's account): runs alone, after the others.
//
// The captured, captured-2 and isolated lanes are three jest processes side by side (--runInBand
// each). The isolated files are shared between the two with the stack's own TB_DB_NAME (an
// isolated file may read the stack's database), longest first onto the least loaded, by the
// durations of test/integration/durations.json (a scheduling hint only: 5 s for a file it does
// not list; refresh it with `node test/support/run-lanes.js --durations <reports dir>` after a
// run). Then the exclusive lane. Each process has its own JSON report
// (<reports>/<project>-<lane>.json) and its own range of ports for child processes
// (TB_TEST_LANE, test/support/cli.ts); its output lines are prefixed with its lane's name. Exits
// non-zero when any lane fails, after printing each failed file's pipeline log tail.
//
// With --mysql: only the files whose docblock says `@mysql` (the files that prove the mission on
// MySQL, run on the cluster stack, whose servers are MySQL: stack/cluster.env), in lanes of their
// own: `mysql` (the captured and captured-2 files, on the stack's database, one at a time) beside
// `mysql-isolated`, the isolated files spread over both; then `mysql-exclusive`. Their reports
// and the pipelines' logs go to the reports dir given.
//
// Usage: node test/support/run-lanes.js <project> <reports dir> [--mysql]
//        node test/support/run-lanes.js --durations <reports dir>   (rewrites durations.json)
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { extract, parse } = require('jest-docblock');

const LANES = ['captured', 'captured-2', 'isolated', 'exclusive'];
const root = path.join(__dirname, '../..');
const [project, reports, mode] = process.argv.slice(2);
const durationsFile = path.join(root, 'test/integration/durations.json');
if (!project || !reports) {
  console.error('usage: node test/support/run-lanes.js <project> <reports dir> | --durations <reports dir>');
  process.exit(2);
}

/** Each file's seconds in the integration reports of `dir`, written to durations.json. */
function writeDurations(dir) {
  const seconds = {};
  for (const report of fs.readdirSync(dir).filter((f) => /^integration-.*\.json$/.test(f))) {
    for (const suite of JSON.parse(fs.readFileSync(path.join(dir, report), 'utf8')).testResults) {
      seconds[path.relative(root, suite.name)] = Math.round((suite.endTime - suite.startTime) / 1000);
    }
  }
  const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
  fs.writeFileSync(durationsFile, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`${Object.keys(sorted).length} durations written to ${path.relative(root, durationsFile)}`);
}

const known = fs.existsSync(durationsFile) ? JSON.parse(fs.readFileSync(durationsFile, 'utf8')) : {};
const seconds = (file) => known[file] ?? 5;
const secondsOf = (files) => files.reduce((s, f) => s + seconds(f), 0);

/** The isolated files spread over `lanes` (lane → files, already holding their own): longest first, onto the least loaded. */
function spreadIsolated(isolated, lanes) {
  const load = Object.fromEntries(Object.entries(lanes).map(([lane, files]) => [lane, secondsOf(files)]));
  for (const file of [...isolated].sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b))) {
    const lightest = Object.keys(load).reduce((a, b) => (load[b] < load[a] ? b : a));
    lanes[lightest].push(file);
    load[lightest] += seconds(file);
  }
  return load;
}

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The file's lane: its `@lane` pragma, `captured` without one; an unknown lane is an error. */
function pragmasOf(file) {
  return parse(extract(fs.readFileSync(file, 'utf8')));
}

function laneOf(file) {
  const lane = pragmasOf(file).lane ?? 'captured';
  if (!LANES.includes(lane)) throw new Error(`${path.relative(root, file)}: unknown @lane ${JSON.stringify(lane)} (one of ${LANES.join(', ')})`);
  return lane;
}

/** Each output line of `stream`, prefixed, to `out`; a partial last line is kept until the next chunk. */
function prefixLines(stream, prefix, out) {
  let rest = '';
  stream.on('data', (chunk) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop();
    for (const line of lines) out.write(`${prefix} ${line}\n`);
  });
  stream.on('end', () => rest && out.write(`${prefix} ${rest}\n`));
}

/** One jest process over `files`; resolves with its report's path and whether it passed. */
function runLane(lane, files, env = {}) {
  const report = path.join(reports, `${project}-${lane}.json`);
  if (files.length === 0) return Promise.resolve({ lane, report: undefined, ok: true });
  const args = ['jest', '--selectProjects', project, '--runInBand', '--forceExit', '--json', `--outputFile=${report}`, '--runTestsByPath', ...files];
  const child = spawn('npx', args, {
    cwd: root,
    env: { ...process.env, TB_TEST_REPORTS: reports, ...env, TB_TEST_LANE: lane },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = `[${lane}]`;
  prefixLines(child.stdout, prefix, process.stdout);
  prefixLines(child.stderr, prefix, process.stderr);
  return new Promise((resolve) => child.on('close', (code) => resolve({ lane, report, ok: code === 0 })));
}

/** Connect's REST API: the JSON answer, or an error with the status and body. */
async function connect(method, url, body) {
  const res = await fetch(`http://127.0.0.1:${process.env.TB_CONNECT_PORT ?? '18083'}${url}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok && res.status !== 404) throw new Error(`Connect ${method} ${url}: HTTP ${res.status} ${text}`);
  return res.ok && text ? JSON.parse(text) : undefined;
}

/** Bounded wait until connector `name` and its task are RUNNING; a FAILED one is an error at once. */
async function untilRunning(name) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await connect('GET', `/connectors/${name}/status`).catch(() => undefined);
    const states = status ? [status.connector, ...status.tasks].map((t) => t.state) : [];
    if (states.length > 1 && states.every((s) => s === 'RUNNING')) return;
    if (states.includes('FAILED')) throw new Error(`connector ${name} FAILED: ${JSON.stringify(status).slice(0, 2000)}`);
    if (Date.now() > deadline) throw new Error(`connector ${name} not RUNNING after 90 s: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * The second captured database for `run(env)`: created and migrated, its connector registered
 * and RUNNING; all removed afterwards, whatever the lane's outcome. No files, nothing to set up.
 */
async function secondCapture(files, run) {
  if (files.length === 0) return { lane: 'captured-2', report: undefined, ok: true };
  const suffix = `${process.pid}_${Math.random().toString(16).slice(2, 8)}`;
  const env = {
    TB_DB_NAME: `${process.env.TB_DB_NAME ?? 'timebucket'}_test_capture2_${suffix}`,
    TB_CDC_TOPIC_PREFIX: `tbcapture2${suffix.replace(/_/g, '')}`,
  };
  const tag = suffix.replace(/_/g, '-');
  const connectors = [
    [`tb-cdc-capture2-${tag}`, []],
    [`tb-outbox-capture2-${tag}`, ['--outbox']],
  ];
  const historyOf = (name) => path.join(require('node:os').tmpdir(), `${name}.history.dat`);
  const mysql = require('mysql2/promise');
  const server = await mysql.createConnection({
    host: process.env.TB_DB_HOST ?? '127.0.0.1',
    port: Number(process.env.TB_DB_PORT ?? process.env.TB_STACK_DB_PORT ?? 13306),
    user: process.env.TB_DB_USER,
    password: process.env.TB_DB_PASSWORD,
  });
  const cli = (args) =>
    execFileSync('node', ['dist/cli/main.js', ...args], {
      cwd: root,
      env: { ...process.env, ...env, TB_LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  try {
    await server.query(`CREATE DATABASE \`${env.TB_DB_NAME}\``);
    cli(['migrate']);
    // The CDC connector of the mapped tables and the event_outbox connector (Debezium's Outbox
    // Event Router), as the stack registers its own.
    for (const [name, kind] of connectors) {
      const config = JSON.parse(
        cli([
          'connector',
          'config',
          ...kind,
          '--config-only',
          '--flavour',
          'auto',
          '--name',
          name,
          '--server-id',
          String(300_000 + Math.floor(Math.random() * 1_000_000)),
          '--history',
          `file:${historyOf(name)}`,
          '--replication-factor',
          process.env.TB_KAFKA_REPLICATION_FACTOR ?? '1',
          '--db-user',
          process.env.TB_CDC_USER ?? 'debezium',
          '--db-password',
          process.env.TB_CDC_PASSWORD ?? 'debezium',
        ]),
      );
      // The tables are new and empty: no snapshot, straight to the binlog's end.
      await connect('PUT', `/connectors/${name}/config`, { ...config, 'snapshot.mode': 'no_data' });
    }
    for (const [name] of connectors) await untilRunning(name);
    return await run(env);
  } catch (err) {
    console.error(`[captured-2] ${err instanceof Error ? err.message : err}`);
    return { lane: 'captured-2', report: undefined, ok: false };
  } finally {
    for (const [name] of connectors) {
      await connect('DELETE', `/connectors/${name}`).catch((err) => console.error(`[captured-2] ${err.message}`));
      fs.rmSync(historyOf(name), { force: true });
    }
    await server.query(`DROP DATABASE IF EXISTS \`${env.TB_DB_NAME}\``).catch((err) => console.error(`[captured-2] ${err.message}`));
    await server.end();
  }
}

/**
 * The @mysql files in two lanes side by side, as the development stack's: `mysql` (the captured
 * files, one at a time, and part of the isolated ones) and `mysql-isolated` (the rest of the
 * isolated ones); then `mysql-exclusive`, alone.
 */
async function mysqlLane() {
  const files = testFiles(path.join(root, 'test', project))
    .sort()
    .filter((f) => pragmasOf(f).mysql !== undefined);
  const of = (lanes) => files.filter((f) => lanes.includes(laneOf(f))).map((f) => path.relative(root, f));
  // A captured-2 file on its own database needs that lane's set-up; here it runs on the stack's.
  const side = { mysql: of(['captured', 'captured-2']), 'mysql-isolated': [] };
  const planned = spreadIsolated(of(['isolated']), side);
  const exclusive = of(['exclusive']);
  fs.mkdirSync(reports, { recursive: true });
  console.log(
    `lanes: ${Object.entries(side)
      .map(([l, f]) => `${l} ${f.length} files (~${planned[l]} s)`)
      .join(', ')}; then mysql-exclusive ${exclusive.length} files`,
  );
  const started = Date.now();
  const together = await Promise.all(Object.entries(side).map(([lane, f]) => runLane(lane, f)));
  const results = [...together, await runLane('mysql-exclusive', exclusive)];
  console.log(`lanes: mysql done in ${Math.round((Date.now() - started) / 1000)} s`);
  for (const r of results.filter((x) => !x.ok)) {
    if (r.report && fs.existsSync(r.report)) {
      await new Promise((resolve) => spawn('node', [path.join(__dirname, 'print-failed-logs.js'), r.report], { stdio: 'inherit' }).on('close', resolve));
    } else {
      console.log(`[${r.lane}] failed before writing its report`);
    }
  }
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

async function main() {
  if (mode === '--mysql') return mysqlLane();
  if (mode !== undefined) throw new Error(`unknown option ${mode} (--mysql)`);
  const projectDir = path.join(root, 'test', project);
  const byLane = Object.fromEntries(LANES.map((l) => [l, []]));
  for (const file of testFiles(projectDir).sort()) byLane[laneOf(file)].push(path.relative(root, file));
  fs.mkdirSync(reports, { recursive: true });
  const started = Date.now();
  const side = { captured: [...byLane.captured], 'captured-2': [...byLane['captured-2']], isolated: [] };
  // Not onto captured-2: its TB_DB_NAME is the second database, and an isolated file may read
  // the stack's own (its accounts' grants, its connector), as `timebucket check`'s test does.
  const planned = { ...spreadIsolated(byLane.isolated, { captured: side.captured, isolated: side.isolated }), 'captured-2': secondsOf(side['captured-2']) };
  console.log(
    `lanes: ${Object.entries(side)
      .map(([l, f]) => `${l} ${f.length} files (~${planned[l]} s)`)
      .join(', ')}; then exclusive ${byLane.exclusive.length} files`,
  );
  const together = await Promise.all([
    runLane('captured', side.captured),
    secondCapture(side['captured-2'], (env) => runLane('captured-2', side['captured-2'], env)),
    runLane('isolated', side.isolated),
  ]);
  const alone = await runLane('exclusive', byLane.exclusive);
  const results = [...together, alone];
  console.log(`lanes: done in ${Math.round((Date.now() - started) / 1000)} s`);
  for (const r of results.filter((x) => !x.ok)) {
    if (r.report && fs.existsSync(r.report)) {
      await new Promise((resolve) => spawn('node', [path.join(__dirname, 'print-failed-logs.js'), r.report], { stdio: 'inherit' }).on('close', resolve));
    } else {
      console.log(`[${r.lane}] failed before writing its report`);
    }
  }
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

if (project === '--durations') {
  writeDurations(reports);
  process.exit(0);
}
main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(2);
});
