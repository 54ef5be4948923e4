/**
 * One entity over four tables on two database servers (examples/shop/entities-split.json; MariaDB and
 * MySQL on the development stack, two MySQL servers in the MySQL lane): the
 * seed-style wallet coupon table split into user_coupon_0 … user_coupon_3, the first two on the
 * stack's first server (the main database, beside t_order), the other two on its second server
 * (database `shop_b`). Each server has its own Debezium connector, configured as `timebucket
 * connector config` prints it: its tables' changes routed into one CDC topic per entity, the
 * physical table in the key and in source.table.
 *
 * Same exactness as one table: every due row once, none early by the database clock, one outbox
 * row (in its own database's outbox) and one event per transition, untouched rows untouched; the
 * compensation scanner and backfill read every table. Then the second server is killed for 20 s
 * mid-flow: its shards hold and catch up when it is back, while the main database's rows go on
 * transitioning on time, and nothing is lost or duplicated. Then it is frozen (SIGSTOP: it
 * neither answers nor refuses) with batches of its rows due: they hold only its own expiry
 * slots, fail at their statements' deadline and open its breaker, while the main database's
 * rows go on transitioning and /metrics and /readyz answer, naming it; thawed, its rows catch
 * up, once each. Then a process is started while it is down: it serves the main database at
 * once, and the second server's rows once it is back and its tables are checked. `explain` finds a
 * row where it lives (shop_b), its event read from that database's outbox and found on the wire.
 *
 * @mysql
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { parseEntityFile } from '../../../src/core/entity-file';
import { replayCommand } from '../../../src/cli/replay-run';
import { runBackfill } from '../../../src/cli/backfill';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { collectEvents, SeenEvent } from '../../support/events';
import { applyCdcTopics, createTestPipeline, TestPipeline } from '../../support/pipeline';
import { logger } from '../../support/stack';
import { freezeDatabaseServer, stackUp, stopDatabaseServer } from '../../support/stack-control';
import { createTablesFrom } from '../../support/sql-file';
import { createTestDatabase, secondServer, TestDatabase } from '../../support/test-database';
import type { Running } from '../../../src/main';
import { startOpsServer } from '../../../src/ops/http-server';
import { processReadiness } from '../../../src/cli/readiness';
import { registerOutboxConnector, registerTestConnector, TestConnector, type TestOutboxConnector } from '../../support/test-connector';
import { outboxEvents } from '../../support/outbox-rows';
import { waitFor } from '../../support/wait-for';
import { countInStatus, metricSum } from '../../support/counts';
import { eventPathOf, explainRow } from '../../../src/cli/explain-command';
import { wireLook } from '../../../src/cli/explain-wire';
import { systemClock } from '../../../src/core/clock';
import { createKafka } from '../../../src/kafka/client';

const shop = join(__dirname, '../../../examples/shop');
const entities = JSON.parse(readFileSync(join(shop, 'entities-split.json'), 'utf8')) as unknown;
const catalogue = parseEntityFile(entities, 'examples/shop/entities-split.json');
const BASE = 2n ** 60n + BigInt(Math.floor(Math.random() * 1_000_000)) * 10_000n;
const id = (n: number): string => String(BASE + BigInt(n));
const UNUSED = '待使用';
const LOCKED = '已锁定';
const USED = '已使用';
const EXPIRED = '已过期';

let main: TestDatabase;
let second: TestDatabase;
let connectors: TestConnector[] = [];
let outboxConnectors: TestOutboxConnector[] = [];
let pipeline: TestPipeline;
/** The stream roles, started in beforeAll (and again by the start-while-down test). */
let stream: Running;
/** The due coupons of the first test, by table. */
let firstDue: string[][] = [];
let events: { events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> };

/** Which server holds table `user_coupon_<k>`. */
const dbOf = (k: number): Knex => (k < 2 ? main.db : second.db);

beforeAll(async () => {
  main = await createTestDatabase('split-main');
  second = await createTestDatabase('split-b', { server: 2 });
  // The shipped DDL, each coupon table a copy of user_coupon (CREATE TABLE … LIKE: the same
  // columns and indexes, as a sharded schema has them).
  for (const [db, tables] of [
    [main.db, [0, 1]],
    [second.db, [2, 3]],
  ] as const) {
    await createTablesFrom(db, join(shop, 'schema.sql'));
    for (const k of tables) await db.raw(`CREATE TABLE user_coupon_${k} LIKE user_coupon`);
    await db.raw('DROP TABLE user_coupon');
  }
  await second.db.raw('DROP TABLE t_order');
  connectors = [
    await registerTestConnector(catalogue, main.name),
    await registerTestConnector(catalogue, second.name, { server: 2, entitiesDatabase: 'shop_b' }),
  ];
  outboxConnectors = [await registerOutboxConnector(main.name), await registerOutboxConnector(second.name, { server: 2 })];
  pipeline = await createTestPipeline({
    entities,
    env: {
      TB_DB_NAME: main.name,
      TB_CDC_TOPIC_PREFIX: connectors[0]!.topicPrefix,
      TB_DATABASES: 'shop_b',
      TB_DB_SHOP_B_PORT: String(secondServer().port),
      TB_DB_SHOP_B_NAME: second.name,
      TB_DB_SHOP_B_CDC_TOPIC_PREFIX: connectors[1]!.topicPrefix,
      // For the last test's scanner: rows overdue by a second are its, passes every second.
      TB_SCANNER_GRACE_MS: '1000',
      TB_SCANNER_INTERVAL_MS: '1000',
      TB_SCANNER_MAX_PAGES_PER_SECOND: '50',
      // The frozen-server test's statements give up after 6 s (the default 15 s would only make it longer).
      TB_DB_STATEMENT_TIMEOUT_MS: '6000',
      TB_DB_LOCK_WAIT_TIMEOUT_S: '5',
      // The start-while-down test's second server is found answering again within a second.
      TB_DB_PING_INTERVAL_MS: '1000',
    },
  });
  await applyCdcTopics(pipeline);
  events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  stream = await pipeline.start();
});

afterAll(async () => {
  await events?.stop();
  await pipeline?.stopAll();
  for (const c of [...connectors, ...outboxConnectors]) await c.remove();
  await Promise.allSettled([main?.drop(), second?.drop()]);
  stackUp(); // whatever happened, leave the second server running for the next test
});

const nowMs = 'ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000)';

type Scrape = Readonly<{ status: number; text: string }>;

/**
 * `running`'s /metrics and /readyz, served as `timebucket run` serves them. A scrape that does
 * not answer within 10 s (a collector waiting on the frozen server) rejects.
 */
async function opsEndpointOf(running: Running) {
  const readiness = () => processReadiness(running, { joined: true, stopping: false });
  const server = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    registry: pipeline.metrics.registry,
    isReady: () => readiness().ready,
    readyDetails: () => readiness().details,
    health: running.health,
    logger,
  });
  const get = async (path: string): Promise<Scrape> => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { signal: AbortSignal.timeout(10_000) });
    return { status: res.status, text: await res.text() };
  };
  return { get, close: server.close };
}

/** Whether /readyz answers not ready, naming `database` as not answering. */
function namesNotAnswering(readyz: Scrape, database: string): boolean {
  const body = JSON.parse(readyz.text) as { ready: boolean; databases?: Record<string, { answering: boolean }> };
  return readyz.status === 503 && body.ready === false && body.databases?.[database]?.answering === false;
}

function coupon(db: Knex, n: number, status: string, dueInMs: number, lockedForMs: number | null = null) {
  return {
    id: id(n),
    user_id: id(900 + (n % 3)),
    coupon_template_id: 7,
    status,
    face_value: '10.00',
    expire_at_ms: db.raw(`${nowMs} + ?`, [dueInMs]),
    lock_expire_time: lockedForMs === null ? null : db.raw('NOW(3) + INTERVAL ? MICROSECOND', [lockedForMs * 1000]),
    lock_order_no: lockedForMs === null ? null : `NO-${n}`,
  };
}

/** Inserts `count` coupons per table, ids from `first` + 1000 × table; returns their ids by table. */
async function insertEach(
  first: number,
  count: number,
  status: string,
  dueInMs: (i: number) => number,
  lockedForMs: number | null = null,
): Promise<string[][]> {
  const byTable: string[][] = [];
  for (let k = 0; k < 4; k += 1) {
    const db = dbOf(k);
    const rows = Array.from({ length: count }, (_, i) => coupon(db, first + k * 1_000 + i, status, dueInMs(i), lockedForMs));
    await db(`user_coupon_${k}`).insert(rows);
    byTable.push(rows.map((r) => r.id));
  }
  return byTable;
}

type CouponRow = { id: string; status: string; expire_at_ms: number; lock_order_no: string | null };

async function couponsOf(k: number, ids: readonly string[]): Promise<CouponRow[]> {
  return (await dbOf(k)(`user_coupon_${k}`).whereIn('id', ids).select('id', 'status', 'expire_at_ms', 'lock_order_no')) as CouponRow[];
}

const countIn = (k: number, ids: readonly string[], status: string) => countInStatus(dbOf(k), `user_coupon_${k}`, status, ids);

/** Waits until every id of `byTable[k]` is EXPIRED in table k, for all four tables. */
async function waitAllExpired(what: string, byTable: readonly (readonly string[])[], timeoutMs: number): Promise<void> {
  await waitFor(
    what,
    async () => {
      for (const [k, ids] of byTable.entries()) if ((await countIn(k, ids, EXPIRED)) !== ids.length) return undefined;
      return true;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

type OutboxRow = { event_key: string; event_type: string; entity_id: string; payload: string };

/** The events written in `db` for the user coupons `ids`, in either outbox, as JSON rows. */
async function outboxOf(db: Knex, ids: readonly string[]): Promise<OutboxRow[]> {
  const events = await outboxEvents(db, pipeline.catalogue, { entity: 'user_coupon', ids });
  return events.map((e) => ({ event_key: e.eventKey, event_type: e.eventType, entity_id: e.entityId, payload: JSON.stringify(e.payload) }));
}

test('every due coupon of every table on both servers expires once, on time by its database clock, its event written in its own database', async () => {
  const due = await insertEach(0, 12, UNUSED, (i) => 2_000 + (i % 4) * 500);
  firstDue = due;
  const locked = await insertEach(100, 3, LOCKED, () => 4_000, 1_500);
  const used = await insertEach(200, 2, USED, () => 2_000);

  await waitAllExpired(
    'every due and lock-timed-out coupon expired, in all four tables',
    due.map((ids, k) => [...ids, ...locked[k]!]),
    90_000,
  );
  for (let k = 0; k < 4; k += 1) {
    expect(await countIn(k, used[k]!, USED)).toBe(used[k]!.length);
    // A table's outbox is its database's: the coupon rows of tables 0-1 in main, 2-3 in shop_b.
    const mine = [...due[k]!, ...locked[k]!];
    const outbox = await outboxOf(dbOf(k), mine);
    expect(outbox.filter((r) => r.event_type === 'USER_COUPON_EXPIRED')).toHaveLength(mine.length);
    expect(outbox.filter((r) => r.event_type === 'USER_COUPON_UNLOCKED')).toHaveLength(locked[k]!.length);
    expect(await outboxOf(dbOf(k === 0 || k === 1 ? 2 : 0), mine)).toEqual([]);
    for (const r of outbox) {
      const p = JSON.parse(r.payload) as { due_at: number; occurred_at: number };
      expect(p.occurred_at).toBeGreaterThanOrEqual(p.due_at);
    }
  }
  const all = [...due.flat(), ...locked.flat()];
  await waitFor(
    'every event published',
    () =>
      new Set(events.events.filter((e) => all.includes(e.key)).map((e) => e.headers['event_key'])).size === all.length + locked.flat().length
        ? true
        : undefined,
    {
      timeoutMs: 60_000,
      intervalMs: 250,
    },
  );
  expect(events.undecodable).toEqual([]);
  const expired = events.events.filter((e) => e.headers['event_type'] === 'USER_COUPON_EXPIRED' && all.includes(e.key));
  expect(expired.map((e) => e.key).sort()).toEqual([...all].sort());
  expect(expired[0]!.value).toMatchObject({ from_status: UNUSED, to_status: EXPIRED, face_value: '10.00' });
});

test("replay reads each entry's row where it lives: a replayed bucket of both servers' coupons is all already done", async () => {
  // The second server's latest-due coupon of the first test: its bucket on the finest ring. Not
  // the earliest: those buckets may also hold the locked coupons' lock timeouts (1.5 s after
  // insertion, the due ones 2 to 3.5 s), whose rows have since expired, which replay rightly
  // counts as stale.
  const [row] = (await second.db('user_coupon_2').whereIn('id', firstDue[2]!).orderBy('expire_at_ms', 'desc').limit(1).select('expire_at_ms')) as Array<{
    expire_at_ms: number;
  }>;
  const progress = { start: () => undefined, update: () => undefined, stop: () => undefined };
  const summary = await replayCommand(
    pipeline.config,
    pipeline.topology,
    pipeline.catalogue,
    logger,
    { atMs: Number(row!.expire_at_ms), dryRun: true, json: false },
    { print: () => undefined, progress },
  );
  expect(summary.counts.entries).toBeGreaterThanOrEqual(1);
  // Read on the wrong table or server, a row would be missing, hence stale.
  expect(summary.counts).toMatchObject({ alreadyDone: summary.counts.entries, stale: 0, due: 0, invalid: 0 });
});

test("explain finds a row where it lives: a second-server coupon moved by the stream, in shop_b, its event read from shop_b's outbox and found on the wire", async () => {
  const row = firstDue[3]![0]!;
  const pathOf = eventPathOf(pipeline.config.registry);
  const kafka = createKafka(pipeline.config.kafka, logger, '-test-explain');
  const wire = wireLook({
    kafka,
    topology: pipeline.topology,
    catalogue,
    groupPrefix: pipeline.config.groupPrefix,
    maxRecords: 10_000,
    clock: systemClock,
    logger,
  });
  const e = await explainRow(pipeline.config, pipeline.topology, catalogue, 'user_coupon', row, { pathOf, wire });
  expect(e).toMatchObject({ found: true, database: 'shop_b', table: 'user_coupon_3' });
  const expired = e.found ? e.transitions.find((t) => t.transition === 'expired') : undefined;
  expect(expired).toMatchObject({ state: 'transitioned', event: { found: { topic: expect.any(String) as string } } });
  expect(expired!.verdict).toMatch(
    new RegExp(`^moved [0-9a-z ]+ after due by stream at .*; event user_coupon-expired-${row}-\\d+-\\d+ on \\S+, partition \\d+, offset \\d+$`),
  );
  // Asked of the main database only, the row is not there.
  expect(await explainRow(pipeline.config, pipeline.topology, catalogue, 'user_coupon', row, { database: 'main' })).toMatchObject({
    found: false,
    searched: ['main.user_coupon_0', 'main.user_coupon_1'],
  });
});

test('the second server killed for 20 s mid-flow: its tables hold and catch up, the main database’s go on transitioning on time', async () => {
  // Due from 3 s to 33 s after now, every table: the outage falls in the middle of the flow.
  const spreadMs = (i: number) => 3_000 + i * 1_000;
  const rows = await insertEach(300, 31, UNUSED, spreadMs);
  await waitFor(
    'the flow to start on both servers',
    async () => ((await countIn(0, rows[0]!, EXPIRED)) >= 2 && (await countIn(2, rows[2]!, EXPIRED)) >= 2 ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 200,
    },
  );
  await stopDatabaseServer(2);
  const stoppedAt = Date.now();
  await waitFor('20 s with the second server gone', () => (Date.now() - stoppedAt >= 20_000 ? true : undefined), { timeoutMs: 25_000, intervalMs: 500 });
  // The main database's rows due in the outage's first 10 s transitioned while it lasted: held
  // for the other server, they would wait for it to come back. An order, not a speed: the
  // outage's last 10 s are the margin a loaded machine has (due times and the test's clock are
  // the same machine's clock). How late each one was is speed, measured by `make bench`.
  const mainRows = [...(await couponsOf(0, rows[0]!)), ...(await couponsOf(1, rows[1]!))];
  const dueEarlyInOutage = mainRows.filter((c) => Number(c.expire_at_ms) > stoppedAt && Number(c.expire_at_ms) <= stoppedAt + 10_000);
  // Ten a table when the flow started promptly; five even if it took 15 s longer.
  expect(dueEarlyInOutage.length).toBeGreaterThanOrEqual(2 * 5);
  expect(dueEarlyInOutage.filter((c) => c.status !== EXPIRED).map((c) => c.id)).toEqual([]);
  stackUp();
  // Written as soon as the server is back, due 3 s later: captured, transitioned and published
  // only once both its connectors have read the binlog again.
  const afterReturn = await insertEach(400, 5, UNUSED, () => 3_000);

  await waitAllExpired('every coupon expired in all four tables once the server is back', rows, 120_000);
  for (let k = 0; k < 4; k += 1) {
    const outbox = await outboxOf(dbOf(k), rows[k]!);
    expect(outbox).toHaveLength(rows[k]!.length);
    expect(new Set(outbox.map((r) => r.event_key)).size).toBe(rows[k]!.length);
    for (const r of outbox) {
      const p = JSON.parse(r.payload) as { due_at: number; occurred_at: number };
      expect(p.occurred_at).toBeGreaterThanOrEqual(p.due_at);
    }
    const found = await couponsOf(k, rows[k]!);
    expect(found.every((c) => c.status === EXPIRED)).toBe(true);
  }
  const all = [...rows.flat(), ...afterReturn.flat()];
  await waitFor(
    'every event published, once',
    () => (new Set(events.events.filter((e) => all.includes(e.key)).map((e) => e.headers['event_key'])).size === all.length ? true : undefined),
    {
      timeoutMs: 150_000,
      intervalMs: 250,
    },
  );
  // The connectors reconnect by their keepalive (connect.keep.alive.interval.ms, 5 s in the
  // generated configuration): the second server's rows due after it is back are on the wire
  // within 30 s of their due time. At Debezium's default of a minute they took 60 to 95 s; the
  // bound is that behaviour, with room for a loaded machine.
  const onSecond = new Set(afterReturn.slice(2).flat());
  const lateBy = new Map<string, number>();
  for (const e of events.events) if (onSecond.has(e.key) && !lateBy.has(e.key)) lateBy.set(e.key, e.receivedAt - Number(e.value['due_at']));
  expect(lateBy.size).toBe(onSecond.size);
  expect(Math.max(...lateBy.values())).toBeLessThan(30_000);
}, 360_000);

test("the second server frozen with its rows due: they hold only its own slots until their deadline opens its breaker, the main database's rows go on; thawed, its rows catch up once each", async () => {
  // Both servers warm: their connectors capturing, the expirer's pools holding idle connections
  // to each (the hung statements below are on pooled connections, the case TCP never ends).
  const warm = await insertEach(800, 2, UNUSED, () => 1_500);
  await waitAllExpired('the warm-up coupons expired on both servers', warm, 60_000);

  // Second-server coupons due 12 to 16 s from now, a batch every half second per table: more
  // batches than the expirer's four slots. Frozen once their entries are in the rings.
  // (Rows of all four tables, one entry each: once every one is routed, the second server's are.)
  const routedBefore = await metricSum(pipeline.metrics.routed);
  const inserted = await insertEach(900, 8, UNUSED, (i) => 12_000 + i * 500);
  await waitFor(
    'the held coupons routed into the rings',
    async () => ((await metricSum(pipeline.metrics.routed)) >= routedBefore + inserted.flat().length ? true : undefined),
    {
      timeoutMs: 30_000,
      intervalMs: 100,
    },
  );
  const held = inserted.map((ids, k) => (k >= 2 ? ids : []));
  const notYet = (await countIn(2, held[2]!, EXPIRED)) + (await countIn(3, held[3]!, EXPIRED));
  // (Routed within the 12 s head start they were given, or this test proves nothing.)
  expect(notYet).toBe(0);
  const failuresBefore = await metricSum(pipeline.metrics.batchFailures);
  const ops = await opsEndpointOf(stream);
  const thaw = freezeDatabaseServer(2);
  const scrapes: Scrape[] = [];
  let readyzNamedIt = false;
  try {
    // Main-database coupons due through and after the held ones: with slots shared, the second
    // server's hung batches would hold all four and these would wait for the thaw.
    const onMain = await Promise.all(
      [0, 1].map(async (k) => {
        const rows = Array.from({ length: 15 }, (_, i) => coupon(main.db, 5_000 + k * 100 + i, UNUSED, 4_000 + i * 1_500));
        await main.db(`user_coupon_${k}`).insert(rows);
        return rows.map((r) => r.id);
      }),
    );
    await waitFor(
      "every main-database coupon expired, and the frozen server's breaker open",
      async () => {
        const expired = (await countIn(0, onMain[0]!, EXPIRED)) + (await countIn(1, onMain[1]!, EXPIRED));
        const breaker = await metricSum(pipeline.metrics.breakerState, { breaker: 'expiry-shop_b' });
        // Scraped as Prometheus would, throughout: every scrape must answer, so the breaker's
        // alert could fire during the outage it is for.
        const metrics = await ops.get('/metrics').catch((err: unknown) => ({ status: 0, text: String(err) }));
        scrapes.push(metrics);
        readyzNamedIt ||= namesNotAnswering(await ops.get('/readyz'), 'shop_b');
        return expired === onMain.flat().length && breaker === 2 && readyzNamedIt && metrics.text.includes('timebucket_database_up{database="shop_b"} 0')
          ? true
          : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(scrapes.filter((m) => m.status !== 200).map((m) => m.text)).toEqual([]);
    // Its batches failed (retriable, retried) instead of hanging.
    expect(await metricSum(pipeline.metrics.batchFailures)).toBeGreaterThan(failuresBefore);
    expect(await metricSum(pipeline.metrics.parked)).toBe(0);
  } finally {
    thaw();
  }
  await waitAllExpired("the frozen server's coupons expired once it answers again", held, 90_000);
  await waitFor('/readyz ready again', async () => ((await ops.get('/readyz')).status === 200 ? true : undefined), { timeoutMs: 30_000, intervalMs: 250 });
  await ops.close();
  for (const k of [2, 3]) {
    const outbox = await outboxOf(dbOf(k), held[k]!);
    expect(
      outbox
        .filter((r) => r.event_type === 'USER_COUPON_EXPIRED')
        .map((r) => r.entity_id)
        .sort(),
    ).toEqual([...held[k]!].sort());
    for (const r of outbox) {
      const p = JSON.parse(r.payload) as { due_at: number; occurred_at: number };
      expect(p.occurred_at).toBeGreaterThanOrEqual(p.due_at);
    }
  }
}, 300_000);

test('a process started while the second server is down serves the main database at once, and the second server once it is back, once each', async () => {
  // Second-server coupons in the rings before it goes (captured from its binlog, routed), due
  // once the new process runs; the main database's due at once after the start.
  const routedBefore = await metricSum(pipeline.metrics.routed);
  const inserted = await insertEach(1_500, 3, UNUSED, () => 15_000);
  await waitFor(
    'the coupons routed into the rings',
    async () => ((await metricSum(pipeline.metrics.routed)) >= routedBefore + inserted.flat().length ? true : undefined),
    {
      timeoutMs: 30_000,
      intervalMs: 100,
    },
  );
  await pipeline.stopAll();
  await stopDatabaseServer(2);
  let ops: Awaited<ReturnType<typeof opsEndpointOf>> | undefined;
  try {
    // Reading the second server's tables at start was refused: the process must start anyway.
    stream = await pipeline.start();
    ops = await opsEndpointOf(stream);
    const onMain = await Promise.all(
      [0, 1].map(async (k) => {
        const rows = Array.from({ length: 5 }, (_, i) => coupon(main.db, 6_000 + k * 100 + i, UNUSED, 2_000 + i * 500));
        await main.db(`user_coupon_${k}`).insert(rows);
        return rows.map((r) => r.id);
      }),
    );
    const endpoint = ops;
    await waitFor(
      "the main database's coupons expired while the second server is down, and /readyz naming it",
      async () => {
        const expired = (await countIn(0, onMain[0]!, EXPIRED)) + (await countIn(1, onMain[1]!, EXPIRED));
        return expired === onMain.flat().length && namesNotAnswering(await endpoint.get('/readyz'), 'shop_b') ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(stream.databases()['shop_b']).toMatchObject({ answering: false, checked: false });
    expect(await metricSum(pipeline.metrics.parked)).toBe(0);
  } finally {
    stackUp();
  }
  await waitAllExpired('every coupon expired once the second server is back and its tables checked', inserted, 120_000);
  for (const k of [2, 3]) {
    const outbox = await outboxOf(dbOf(k), inserted[k]!);
    expect(
      outbox
        .filter((r) => r.event_type === 'USER_COUPON_EXPIRED')
        .map((r) => r.entity_id)
        .sort(),
    ).toEqual([...inserted[k]!].sort());
  }
  expect(stream.databases()['shop_b']).toMatchObject({ answering: true, checked: true });
  await waitFor('/readyz ready once the second server is back', async () => ((await ops!.get('/readyz')).status === 200 ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 250,
  });
  await ops?.close();
}, 300_000);

test('with CDC gone, the compensation scanner catches the overdue rows of every table, and backfill schedules the rest', async () => {
  // Neither connector captures anything from here on: only the scanner and backfill read the tables.
  for (const c of connectors.splice(0)) await c.remove();
  const overdue = await insertEach(600, 4, UNUSED, () => -5_000);
  const running = await pipeline.start(['scanner']);
  await waitAllExpired('the scanner to expire every overdue coupon, in all four tables', overdue, 60_000);
  for (let k = 0; k < 4; k += 1) {
    const paths = (await outboxOf(dbOf(k), overdue[k]!)).map((r) => (JSON.parse(r.payload) as { path: string }).path);
    expect(paths).toEqual(overdue[k]!.map(() => 'scanner'));
  }
  await running.stop();
  // Written once the scanner has stopped: with its 1 s grace, a scanner pass later than 4 s after
  // their insertion would take them too, and backfill would find fewer than twelve.
  const ahead = await insertEach(700, 3, UNUSED, () => 3_000);

  // Backfill reads every table (merged in due order) and routes each row to the rings; the
  // stream then fires them on time.
  const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  let lines: string[];
  try {
    await runBackfill(pipeline.config, pipeline.topology, pipeline.catalogue, logger, {
      transitions: [transitionOf(catalogue, 'user_coupon', 'expired')],
      window: {},
      pageSize: 5,
      json: true,
    });
  } finally {
    lines = printed.mock.calls.map((c) => String(c[0]));
    printed.mockRestore();
  }
  // The three not-yet-due coupons of each of the four tables, read and routed (the overdue ones are expired by now).
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ complete: true, entities: [{ entity: 'user_coupon', transition: 'expired', read: 12, routed: 12 }] });
  await waitAllExpired('the backfilled coupons expired by the stream', ahead, 60_000);
  for (let k = 0; k < 4; k += 1) {
    const outbox = await outboxOf(dbOf(k), ahead[k]!);
    expect(outbox.map((r) => (JSON.parse(r.payload) as { path: string }).path)).toEqual(ahead[k]!.map(() => 'stream'));
    for (const r of outbox) {
      const p = JSON.parse(r.payload) as { due_at: number; occurred_at: number };
      expect(p.occurred_at).toBeGreaterThanOrEqual(p.due_at);
    }
  }
});
