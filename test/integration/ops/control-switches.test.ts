/**
 * The operator's switches against the real stack: two `timebucket run --roles expirer` processes
 * share one consumer group, and the switches are flipped with the real CLI (`timebucket ctl`).
 * A pause reaches both instances, holds every due coupon (visible as due lag, in the metrics and
 * in /readyz) while orders still cancel; resume fires each coupon exactly once. A throttle
 * reaches both instances and paces the transitions.
 *
 * Isolation: the rows live in a database of this file's own and the test schedules them itself,
 * as the repartitioner would (routed bucket records into this pipeline's topics). Rows in the
 * captured `timebucket` database would be expired by any other pipeline running meanwhile
 * (every pipeline reads the shared CDC topics), paused or not. The switches are keyed by
 * TB_GROUP_PREFIX, this pipeline's own; the test checks another scope does not see them.
 *
 * @mysql
 * @lane isolated
 */
import { writeFileSync } from 'node:fs';
import type { Admin, Producer } from 'kafkajs';
import type { Db } from '../../../src/db/knex';
import { systemClock } from '../../../src/core/clock';
import { createKafka } from '../../../src/kafka/client';
import { appendBudgetMs, sendRouted } from '../../../src/kafka/send-routed';
import { config as baseConfig, logger, testLogFile } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { CliRun, freePort, spawnCli } from '../../support/cli';
import { waitFor, withTimeout } from '../../support/wait-for';
import { setPaused, setThrottle } from '../../../src/control/sql/switch-store';
import { countInStatus } from '../../support/counts';

type Instance = Readonly<{ name: string; run: CliRun; port: number }>;

let testDb: TestDatabase;
let db: Db;
let admin: Admin;
let producer: Producer;
let pipeline: TestPipeline;
let scope: string;
const instances: Instance[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase('control');
  db = testDb.db;
  const kafka = createKafka(baseConfig.kafka, logger, '-test-control');
  admin = kafka.admin();
  producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
  // Polls every 500 ms: a switch lands within a second.
  pipeline = await createTestPipeline({
    env: {
      TB_DB_NAME: testDb.name,
      TB_CONTROL_POLL_MS: '500',
      // This file reads an idle pacer's state in /readyz. On a machine shared with two other
      // lanes the latency probe can find the database slow and back the idle pacer off (seen in
      // a rehearsal: backing-off, 60 rows/s); that reaction is hold/pacing-probe.test.ts's subject.
      TB_PACING_PROBE_LATENCY_FACTOR: '1000',
    },
  });
  scope = pipeline.env['TB_GROUP_PREFIX']!;
  for (const name of ['a', 'b']) {
    const port = await freePort();
    const run = spawnCli(['run', '--roles', 'expirer'], {
      ...pipeline.env,
      TB_LOG_LEVEL: 'info',
      TB_HTTP_PORT: String(port),
      TB_INSTANCE_ID: `ctl-${name}-${process.pid}`,
    });
    instances.push({ name, run, port });
  }
  for (const i of instances)
    await waitFor(`expirer ${i.name} to be ready`, async () => ((await readyz(i))?.status === 200 ? true : undefined), { timeoutMs: 90_000, intervalMs: 250 });
  await waitFor(
    'both expirers to share the group, settled',
    async () => {
      const [group] = (await admin.describeGroups([`${scope}.expirer`])).groups;
      return group?.state === 'Stable' && group.members.length === 2 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
});

// Each test starts with every switch off, whatever the one before it left (it may have failed
// half-way, a pause still on): lifted in the store, then awaited on both instances.
afterEach(async () => {
  for (const what of pipeline.catalogue.entities.map((e) => e.name)) {
    await setPaused(db, { scope, what, by: 'test cleanup' }, false);
    await setThrottle(db, { scope, what, by: 'test cleanup' }, null);
  }
  const off = { known: true, paused: [], throttled: {} };
  // Compared as JSON: fetch's objects come from another realm than the test's literals.
  await waitFor(
    'every switch off on both instances',
    async () => ((await Promise.all(instances.map(readyz))).every((r) => JSON.stringify(r?.body.control) === JSON.stringify(off)) ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 100,
    },
  );
});

afterAll(async () => {
  for (const i of instances) if (i.run.child.exitCode === null && i.run.child.signalCode === null) i.run.child.kill('SIGTERM');
  for (const i of instances) {
    await withTimeout(`expirer ${i.name} to exit`, i.run.exited, 30_000).catch(() => i.run.child.kill('SIGKILL'));
    // The instances' own logs, beside this file's: where to look when an assertion fails.
    writeFileSync(testLogFile.replace(/\.log$/, `.expirer-${i.name}.log`), i.run.stdout() + i.run.stderr());
  }
  await pipeline?.stopAll();
  await Promise.all([admin?.disconnect(), producer?.disconnect()]);
  await testDb?.drop();
});

async function ctl(args: string[], env: Record<string, string> = {}): Promise<string> {
  const run = spawnCli(['ctl', ...args], { ...pipeline.env, TB_LOG_LEVEL: 'warn', ...env });
  const exit = await withTimeout(`ctl ${args.join(' ')}`, run.exited, 30_000);
  expect({ exit, stderr: run.stderr() }).toEqual({ exit: { code: 0, signal: null }, stderr: '' });
  return run.stdout();
}

async function readyz(
  i: Instance,
): Promise<{ status: number; body: { ready: boolean; control?: { known: boolean; paused: string[]; throttled: Record<string, number> } } } | undefined> {
  const res = await fetch(`http://127.0.0.1:${i.port}/readyz`).catch(() => undefined);
  return res === undefined ? undefined : { status: res.status, body: (await res.json()) as never };
}

/** The value of a sample on the instance's /metrics (0 when absent). */
async function metric(i: Instance, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${i.port}/metrics`)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m?.[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (wanted.every((w) => have.includes(w))) return Number(m[3]);
  }
  return 0;
}

const sum = async (name: string, labels: Record<string, string> = {}) =>
  (await Promise.all(instances.map((i) => metric(i, name, labels)))).reduce((a, b) => a + b, 0);

/** What every instance logged as a switch change (structured lines on its stdout). */
function switchChanges(i: Instance): Array<Record<string, unknown>> {
  return i.run
    .stdout()
    .split('\n')
    .filter((l) => l.includes('"control switch changed"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * Rows due `offsetMs`..`offsetMs + spreadMs` from now by the database clock, scheduled into the
 * pipeline's bucket topics as the repartitioner would schedule their CDC events.
 */
async function insertRows(table: 'coupons' | 'orders', count: number, offsetMs: number, spreadMs = 0): Promise<number[]> {
  const status = table === 'coupons' ? 'ACTIVE' : 'UNPAID';
  const rows = Array.from({ length: count }, (_, k) => ({
    user_id: 1,
    status,
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor((offsetMs + (spreadMs * k) / count) * 1000)]),
  }));
  const [first] = await db(table).insert(rows); // one statement in a database of our own: consecutive ids
  const ids = rows.map((_, k) => first! + k);
  const stored = (await db(table).whereIn('id', ids).select('id', 'expire_time')) as Array<{ id: number; expire_time: Date }>;
  const [entity, transition] = table === 'coupons' ? ['coupon', 'expired'] : ['order', 'cancelled'];
  const routing = {
    producer,
    topology: pipeline.topology,
    catalogue: pipeline.catalogue,
    clock: systemClock,
    appendBudgetMs: appendBudgetMs(pipeline.topology),
    logger,
  };
  await sendRouted(
    routing,
    stored.map((r) => ({ entity, transition, id: String(r.id), expireAtMs: r.expire_time.getTime() })),
  );
  return ids;
}

const countStatus = (table: 'coupons' | 'orders', ids: number[], status: string) => countInStatus(db, table, status, ids);

test('pause holds every due coupon on both instances while orders cancel; resume fires each exactly once', async () => {
  const couponTransitionsBefore = await sum('timebucket_transitions_total', { entity: 'coupon' });
  const out = await ctl(['pause', '--what', 'coupon', '--reason', 'integration test']);
  expect(out).toMatch(/^coupon\s+PAUSED\s+no throttle\s+changed \S+Z by \S+ \(reason: integration test\)/);

  // Both instances see it: metric, /readyz (still 200: a paused instance is healthy) and a log line.
  for (const i of instances) {
    await waitFor(
      `instance ${i.name} to report coupon paused`,
      async () => ((await metric(i, 'timebucket_control_paused', { what: 'coupon' })) === 1 ? true : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );
    expect(await metric(i, 'timebucket_control_paused', { what: 'order' })).toBe(0);
    // (The body names the databases too: its one answers; no first pass held; its pacer, idle and
    // healthy, at the rate a drain would start at, TB_PACING_START_ROWS_PER_SECOND.)
    expect(await readyz(i)).toEqual({
      status: 200,
      body: {
        ready: true,
        control: { known: true, paused: ['coupon'], throttled: {} },
        databases: { main: expect.objectContaining({ answering: true, checked: true }) },
        firstPassHeld: [],
        pacing: { main: { state: 'healthy', limitedBy: null, rowsPerSecond: 1_000, budgetUsed: 0 } },
      },
    });
    expect(switchChanges(i)).toContainEqual(
      expect.objectContaining({ what: 'coupon', paused: true, reason: 'integration test', was: { paused: false, perSecond: null } }),
    );
  }
  // Another deployment's scope on the same database is untouched.
  const other = JSON.parse(await ctl(['status', '--json'], { TB_GROUP_PREFIX: `${scope}-other` })) as { switches: Array<{ what: string; paused: boolean }> };
  expect(other.switches.find((s) => s.what === 'coupon')).toMatchObject({ paused: false });

  const coupons = await insertRows('coupons', 40, 2_000, 2_000);
  const orders = await insertRows('orders', 10, 2_000, 2_000);
  await waitFor(
    'every order cancelled while coupons are paused',
    async () => ((await countStatus('orders', orders, 'CANCELLED')) === orders.length ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 250,
    },
  );
  // Held, not merely late: every coupon is due by the database clock, and the instances hold all
  // of them as due lag (released and unfinished).
  const [[latest]] = (await db.raw('SELECT MAX(expire_time) AS t FROM coupons WHERE id IN (?)', [coupons])) as [[{ t: Date }]];
  await waitFor(
    'every coupon due and held by the instances',
    async () => {
      const [[now]] = (await db.raw('SELECT NOW(3) AS t')) as [[{ t: Date }]];
      return now.t.getTime() > latest.t.getTime() + 1_000 && (await sum('timebucket_due_lag_messages', { stage: 'expirer' })) >= coupons.length
        ? true
        : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  expect(await countStatus('coupons', coupons, 'ACTIVE')).toBe(coupons.length);
  expect(await sum('timebucket_transitions_total', { entity: 'coupon' })).toBe(couponTransitionsBefore);

  const status = await ctl(['status']);
  expect(status).toMatch(new RegExp(`^control switches of scope ${scope.replace(/\./g, '\\.')} `));
  expect(status).toMatch(/\ncoupon\s+PAUSED\s+no throttle\s+changed \S+Z by \S+ \(reason: integration test\)/);
  expect(status).toMatch(/\norder\s+running\s+no throttle\s+never changed/);
  // Beside the switches, each instance's pacer of the database (pacing is on by default), refreshed every 5 s.
  expect(status).toMatch(/\npacers \(rows a second each expirer takes per database;/);
  for (const i of instances) expect(status).toMatch(new RegExp(`\\n {2}main +\\S+ +\\S.*; ctl-${i.name}-${process.pid}, [0-9.]+ s ago`));
  const json = JSON.parse(await ctl(['status', '--json'])) as { scope: string; switches: Array<Record<string, unknown>>; pacers: Array<{ instance: string }> };
  expect(json.pacers.map((p) => p.instance).sort()).toEqual(instances.map((i) => `ctl-${i.name}-${process.pid}`).sort());
  expect(json.scope).toBe(scope);
  expect(json.switches[0]).toMatchObject({ what: 'coupon', paused: true, perSecond: null, reason: 'integration test', updatedAt: expect.stringMatching(/Z$/) });

  await ctl(['resume', '--what', 'coupon']);
  await waitFor('every coupon expired after resume', async () => ((await countStatus('coupons', coupons, 'EXPIRED')) === coupons.length ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  // Exactly once: one update each (version 1), one outbox row each, and the instances together
  // counted each transition once.
  const versions = (await db('coupons').whereIn('id', coupons).select('version')) as Array<{ version: number }>;
  expect(versions.every((v) => v.version === 1)).toBe(true);
  // A transition's key ends with its database time, which stamped expired_at too.
  const keys = (
    (await db('coupons').whereIn('id', coupons).select('id', 'expire_time', 'expired_at')) as Array<{ id: number; expire_time: Date; expired_at: Date }>
  ).map((c) => `coupon-expired-${c.id}-${c.expire_time.getTime()}-${c.expired_at.getTime()}`);
  expect(await outboxCount(db, pipeline.catalogue, { keys })).toEqual({ rows: coupons.length, keys: coupons.length });
  await waitFor(
    'the transitions counted',
    async () => ((await sum('timebucket_transitions_total', { entity: 'coupon' })) - couponTransitionsBefore >= coupons.length ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 200,
    },
  );
  expect((await sum('timebucket_transitions_total', { entity: 'coupon' })) - couponTransitionsBefore).toBe(coupons.length);
  for (const i of instances) {
    expect(await metric(i, 'timebucket_control_paused', { what: 'coupon' })).toBe(0);
    expect((await readyz(i))?.body.control).toEqual({ known: true, paused: [], throttled: {} });
  }
  await waitFor('the due lag back to zero', async () => ((await sum('timebucket_due_lag_messages', { stage: 'expirer' })) === 0 ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 200,
  });
});

test('a throttle reaches both instances and paces the transitions; --per-second 0 lifts it', async () => {
  const perSecond = 4;
  await ctl(['throttle', '--what', 'coupon', '--per-second', String(perSecond), '--reason', 'downstream struggling']);
  for (const i of instances) {
    await waitFor(
      `instance ${i.name} to report the throttle`,
      async () => ((await metric(i, 'timebucket_control_throttle_per_second', { what: 'coupon' })) === perSecond ? true : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );
    expect((await readyz(i))?.body.control).toEqual({ known: true, paused: [], throttled: { coupon: perSecond } });
  }

  // All due at one instant. Each instance may send one second's worth at once, then `perSecond`:
  // with both at full speed the last transition comes at least (n − 2·4) / (2·4) = 5 s after the
  // first. Only this lower bound is asserted (a loaded machine can only make it longer), with
  // half of it to spare for the first transaction's own latency; times by the database clock.
  const n = 48;
  const coupons = await insertRows('coupons', n, 3_000);
  await waitFor('every throttled coupon expired', async () => ((await countStatus('coupons', coupons, 'EXPIRED')) === n ? true : undefined), {
    timeoutMs: 90_000,
    intervalMs: 250,
  });
  const [[span]] = (await db.raw('SELECT TIMESTAMPDIFF(MICROSECOND, MIN(expired_at), MAX(expired_at)) / 1000 AS ms FROM coupons WHERE id IN (?)', [
    coupons,
  ])) as [[{ ms: number | string }]];
  const minimalMs = ((n - 2 * perSecond) / (2 * perSecond)) * 1_000;
  expect(Number(span.ms)).toBeGreaterThanOrEqual(minimalMs / 2);
  // And every second, not only on average: in any window of one second each instance sends at
  // most its burst (one second's worth) and a second's refill, 2 · 4 for the two of them 16; two
  // more for a batch whose database clock read came a moment after its tokens. A throttle
  // running at twice its rate puts 24 or more into some window.
  const times = (
    (await db.raw('SELECT TIMESTAMPDIFF(MICROSECOND, ?, expired_at) / 1000 AS ms FROM coupons WHERE id IN (?) ORDER BY expired_at', [
      new Date(0),
      coupons,
    ])) as [Array<{ ms: number | string }>]
  )[0].map((r) => Number(r.ms));
  const busiest = Math.max(...times.map((t, i) => times.slice(i).filter((u) => u < t + 1_000).length));
  expect(busiest).toBeLessThanOrEqual(2 * 2 * perSecond + 2);

  await ctl(['throttle', '--what', 'coupon', '--per-second', '0']);
  for (const i of instances) {
    await waitFor(
      `instance ${i.name} to lift the throttle`,
      async () => ((await metric(i, 'timebucket_control_throttle_per_second', { what: 'coupon' })) === 0 ? true : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );
    expect(switchChanges(i)).toContainEqual(expect.objectContaining({ what: 'coupon', perSecond: null, was: { paused: false, perSecond } }));
  }
});

test('a name the entities file does not hold is refused before anything is written (exit 64), with the choices', async () => {
  const run = spawnCli(['ctl', 'pause', '--what', 'voucher'], { ...pipeline.env, TB_LOG_LEVEL: 'warn' });
  const exit = await withTimeout('ctl pause --what voucher', run.exited, 30_000);
  expect(exit.code).toBe(64);
  expect(run.stderr()).toMatch(/argument 'voucher' is invalid\. Allowed choices are coupon, order, scanner\./);
  const json = JSON.parse(await ctl(['status', '--json'])) as { switches: Array<{ what: string }>; ignored: string[] };
  expect(json.switches.map((s) => s.what)).toEqual(['coupon', 'order', 'scanner']);
  expect(json.ignored).toEqual([]);
});

test('on a database not migrated, ctl exits 78 (bad configuration) and names the fix', async () => {
  const bare = await createTestDatabase('ctl_bare', { migrate: false });
  try {
    const run = spawnCli(['ctl', 'status'], { ...pipeline.env, TB_LOG_LEVEL: 'warn', TB_DB_NAME: bare.name });
    const exit = await withTimeout('ctl status on a bare database', run.exited, 30_000);
    expect(exit.code).toBe(78);
    expect(run.stderr()).toMatch(/table control_switches is missing: run `timebucket migrate` first/);
  } finally {
    await bare.drop();
  }
});
