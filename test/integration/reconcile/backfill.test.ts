/**
 * Where a new deployment starts, and backfill: a new repartitioner group reads the CDC topics
 * from their end, so rows that existed before it are the backfill's; backfill routes them through
 * the router, so rows not yet due fire on time and overdue ones at once, every row exactly once
 * however often it runs.
 *
 * @mysql
 */
import type { Knex } from 'knex';
import { createKafka } from '../../../src/kafka/client';
import { createDb } from '../../../src/db/knex';
import { config as stackConfig, logger, uniqueName } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { registerOutboxConnector, type TestOutboxConnector } from '../../support/test-connector';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { collectEvents } from '../../support/events';
import { spawnCli } from '../../support/cli';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { cdcTopicOf } from '../../../src/ingest/cdc-topics';
import { declaredTopics, isBucketLane } from '../../../src/core/topology';
import { countInStatus, metricSum } from '../../support/counts';

const inMs = (db: Knex, ms: number) => db.raw('NOW(3) + INTERVAL ? MICROSECOND', [ms * 1000]);
const count = (db: Knex, table: 'coupons' | 'orders', status: string, ids?: readonly number[]) => countInStatus(db, table, status, ids);

async function backfillCli(env: Readonly<Record<string, string>>, args: readonly string[] = []) {
  const run = spawnCli(['backfill', '--json', '--page-size', '25', ...args], env);
  const { code } = await run.exited;
  if (code !== 0) throw new Error(`backfill exited ${code}: ${run.stderr()}`);
  // stdout holds the summary alone (logs go to stderr).
  return JSON.parse(run.stdout()) as { complete: boolean; entities: Array<{ entity: string; read: number; routed: number; due: number }> };
}

describe('backfill on a database without CDC', () => {
  let testDb: TestDatabase;
  let pipeline: TestPipeline;
  let outboxConnector: TestOutboxConnector | undefined;

  beforeAll(async () => {
    testDb = await createTestDatabase('backfill');
    outboxConnector = await registerOutboxConnector(testDb.name);
    pipeline = await createTestPipeline({ env: { TB_DB_NAME: testDb.name } });
  });
  afterAll(async () => {
    await pipeline?.stopAll();
    await outboxConnector?.remove();
    await testDb?.drop();
  });

  test('rows not yet due fire at their own time, overdue rows through the due lane, each exactly once though backfill ran twice', async () => {
    const { db } = testDb;
    const AHEAD_MS = 15_000;
    const events = await collectEvents(
      pipeline.config,
      pipeline.topology.events.map((e) => e.topic),
    );
    try {
      // No repartitioner: this database has no CDC, so every entry comes from backfill. The
      // expirer starts only after both runs, so what each run finds expirable does not depend on
      // how long two process starts take on a loaded machine: both find the same 95 rows.
      await pipeline.start(['cascader', 'outbox-keeper']);
      await db('coupons').insert(Array.from({ length: 60 }, (_, i) => ({ user_id: 1, status: 'ACTIVE', expire_time: inMs(db, AHEAD_MS + i * 50) })));
      await db('coupons').insert(Array.from({ length: 10 }, () => ({ user_id: 2, status: 'ACTIVE', expire_time: inMs(db, -30_000) })));
      await db('orders').insert(Array.from({ length: 20 }, (_, i) => ({ user_id: 3, status: 'UNPAID', expire_time: inMs(db, AHEAD_MS + i * 100) })));
      // Not backfill's: later than the run, or not in an expirable state.
      await db('coupons').insert(Array.from({ length: 5 }, () => ({ user_id: 4, status: 'ACTIVE', expire_time: inMs(db, 3_600_000) })));
      await db('coupons').insert({ user_id: 4, status: 'USED', expire_time: inMs(db, AHEAD_MS) });
      await db('orders').insert({ user_id: 4, status: 'PAID', expire_time: inMs(db, AHEAD_MS) });
      // Both runs route every expirable row: the 10 overdue ones into the due lane, the rest into the rings.
      for (let run = 0; run < 2; run += 1) {
        expect(await backfillCli({ ...pipeline.env, TB_DB_NAME: testDb.name })).toEqual({
          complete: true,
          entities: [
            expect.objectContaining({ entity: 'coupon', read: 75, routed: 75, due: 10 }),
            expect.objectContaining({ entity: 'order', read: 20, routed: 20, due: 0 }),
          ],
        });
      }
      await pipeline.start(['expirer']);
      await waitFor(
        'every due row transitioned',
        async () => ((await count(db, 'coupons', 'EXPIRED')) === 70 && (await count(db, 'orders', 'CANCELLED')) === 20 ? true : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 200,
        },
      );
      // Every row had two entries, one per run: the second one found it done, a no-op. At least
      // that many, not exactly: a rejoin of a hold consumer's group re-reads the entries finished
      // since its last commit (hold-consumer.ts), each again a no-op. Rejoins happen while new
      // topics' metadata settles (a fresh-clone CI run logged the cascader's group at generation 3
      // within a second of its start; another counted 105 no-ops here). Exactly once is what the
      // outbox rows and the events below assert.
      const duplicates = 70 + 20;
      await waitFor('the duplicate entries processed', async () => ((await metricSum(pipeline.metrics.stale)) >= duplicates ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      await waitFor('every event published', () => (events.events.length >= 90 ? true : undefined), { timeoutMs: 30_000, intervalMs: 200 });
    } finally {
      await events.stop();
    }
    expect(await outboxCount(db, pipeline.catalogue)).toEqual({ rows: 90, keys: 90 });
    expect(events.events).toHaveLength(90);
    // By the stream's entries (no scanner runs here), never before the due time by the database
    // clock (I2). How late is speed, measured by `make bench`, not here.
    expect(events.events.every((e) => e.value['path'] === 'stream')).toBe(true);
    expect(events.events.filter((e) => Number(e.value['occurred_at']) < Number(e.value['due_at']))).toEqual([]);
    expect(await count(db, 'coupons', 'ACTIVE')).toBe(5);
    expect(await count(db, 'coupons', 'USED')).toBe(1);
    expect(await count(db, 'orders', 'PAID')).toBe(1);
  });

  test('interrupted by SIGTERM, it stops after the page in flight, exits 143 and prints the commands that finish its window exactly', async () => {
    const { db } = testDb;
    const HOUR = 3_600_000;
    // Every coupon at a due time of its own, so the resumed run re-reads exactly the last one routed.
    await db('coupons').insert(Array.from({ length: 2_000 }, (_, i) => ({ user_id: 7, status: 'ACTIVE', expire_time: inMs(db, 2 * HOUR + i) })));
    await db('orders').insert(Array.from({ length: 10 }, (_, i) => ({ user_id: 7, status: 'UNPAID', expire_time: inMs(db, 2 * HOUR + i) })));
    // Past the window's end: no run may read them.
    await db('coupons').insert(Array.from({ length: 5 }, () => ({ user_id: 7, status: 'ACTIVE', expire_time: inMs(db, 3 * HOUR) })));
    const [[{ now }]] = (await db.raw('SELECT NOW(3) AS now')) as [[{ now: Date }]];
    const since = new Date(now.getTime() + 1.5 * HOUR).toISOString();
    const until = new Date(now.getTime() + 2.5 * HOUR).toISOString();
    const env = { ...pipeline.env, TB_DB_NAME: testDb.name, TB_LOG_LEVEL: 'info' };

    // One row a page: the run is still in its first transition when its first entries reach the
    // rings. All of them are watched: rows this far ahead go to the coarsest ring's last bucket
    // counted from the run's clock, which may have moved on to the next bucket by the time the
    // process reads. With the pipeline stopped, nothing else appends to them (its cascader would
    // move the first test's entries an hour ahead along the same ring).
    await pipeline.stopAll();
    const admin = createKafka(stackConfig.kafka, logger, '-test-backfill').admin();
    await admin.connect();
    const rings = declaredTopics(pipeline.topology)
      .map((d) => d.topic)
      .filter((t) => isBucketLane(pipeline.topology, t));
    const appended = async () => (await Promise.all(rings.map((t) => admin.fetchTopicOffsets(t)))).flat().reduce((n, p) => n + Number(p.high), 0);
    let run: ReturnType<typeof spawnCli>;
    try {
      // Retried: on the three-node stack a metadata answer from before the last leader move
      // can leave kafkajs's offset request without its topic (a TypeError inside kafkajs).
      const before = await waitFor("the rings' end offsets", appended, { timeoutMs: 30_000, intervalMs: 200 });
      run = spawnCli(['backfill', '--json', '--page-size', '1', '--since', since, '--until', until], env);
      await waitFor('the first entries appended', async () => ((await appended()) > before ? true : undefined), { timeoutMs: 30_000, intervalMs: 20 });
      run.child.kill('SIGTERM');
    } finally {
      await admin.disconnect();
    }
    expect((await run.exited).code).toBe(143);
    expect(run.stderr()).toMatch(/the backfill interrupted by SIGTERM: the commands above finish it/);
    const summary = JSON.parse(run.stdout()) as {
      complete: boolean;
      entities: Array<{ entity: string; read: number }>;
      resume: { since: string; until: string; then: string[]; commands: string[] };
    };
    expect(summary.complete).toBe(false);
    expect(summary.entities).toEqual([expect.objectContaining({ entity: 'coupon' })]);
    const firstRead = summary.entities[0]!.read;
    expect(firstRead).toBeGreaterThan(0);
    expect(firstRead).toBeLessThan(2_000);
    expect(summary.resume.then).toEqual(['order.cancelled']);
    expect(summary.resume.commands).toEqual([
      `--transition coupon.expired --since ${summary.resume.since} --until ${summary.resume.until}`,
      expect.stringMatching(/^--transition order\.cancelled --since \S+ --until \S+$/),
    ]);
    expect(new Date(summary.resume.until).getTime()).toBe(new Date(until).getTime());
    expect(new Date(summary.resume.commands[1]!.split(' ')[3]!).getTime()).toBe(new Date(since).getTime());

    // The printed commands, as an operator would run them: together they read the window once,
    // the last row routed before the signal a second time, nothing past --until.
    const reads: number[] = [];
    for (const args of summary.resume.commands) {
      const done = await backfillCli(env, args.split(' '));
      expect(done.complete).toBe(true);
      reads.push(done.entities[0]!.read);
    }
    expect([firstRead + reads[0]!, reads[1]]).toEqual([2_001, 10]);
  });

  test('a bad time is refused with the reason, before anything is read', async () => {
    const run = spawnCli(['backfill', '--since', 'yesterday'], { ...pipeline.env, TB_DB_NAME: testDb.name });
    expect((await run.exited).code).not.toBe(0);
    expect(run.stderr()).toMatch(/--since.*not an ISO-8601 time/);
  });
});

describe('a new deployment on a database that already has rows', () => {
  let pipeline: TestPipeline;
  const db = createDb(stackConfig.db, { logger });
  const ids: number[] = [];

  beforeAll(async () => {
    // A group prefix of its own: the harness positions only its default group, so this
    // repartitioner group has no committed offsets and starts where TB_CDC_START_FROM says.
    pipeline = await createTestPipeline({ env: { TB_GROUP_PREFIX: uniqueName('tbfresh').replace(/-/g, '') } });
  });
  afterAll(async () => {
    await pipeline?.stopAll();
    if (ids.length > 0) await db('coupons').whereIn('id', ids).delete();
    await db.destroy();
  });

  test('the stream starts at the end of the CDC topics, and backfill schedules the rows that were there', async () => {
    const admin = createKafka(stackConfig.kafka, logger, '-test-cdc').admin();
    await admin.connect();
    const cdcEnd = async () => (await admin.fetchTopicOffsets(cdcTopicOf(stackConfig.cdc, 'coupons'))).reduce((n, p) => n + Number(p.high), 0);
    try {
      const before = await cdcEnd();
      for (let i = 0; i < 20; i += 1) ids.push((await db('coupons').insert({ user_id: 5, status: 'ACTIVE', expire_time: inMs(db, 4_000) }))[0]!);
      // Their changes are in the CDC topic before the new group exists.
      await waitFor('the existing rows captured', async () => ((await cdcEnd()) >= before + 20 ? true : undefined), { timeoutMs: 30_000, intervalMs: 200 });
    } finally {
      await admin.disconnect();
    }

    await pipeline.start(['repartitioner', 'expirer']);
    const [marker] = await db('coupons').insert({ user_id: 5, status: 'ACTIVE', expire_time: inMs(db, 4_000) });
    ids.push(marker!);
    await waitFor(
      'the row written after start-up expired by the stream',
      async () => ((await count(db, 'coupons', 'EXPIRED', [marker!])) === 1 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
      },
    );
    // Due before the marker, yet untouched: the new group never read their changes.
    const existing = ids.filter((id) => id !== marker);
    expect(await count(db, 'coupons', 'ACTIVE', existing)).toBe(20);

    const window = await db.raw('SELECT MIN(expire_time) AS since, MAX(expire_time) + INTERVAL 1 SECOND AS until FROM coupons WHERE id IN (?)', [existing]);
    const { since, until } = (window as [[{ since: Date; until: Date }]])[0][0];
    const summary = await backfillCli(pipeline.env, ['--entity', 'coupon', '--since', since.toISOString(), '--until', until.toISOString()]);
    expect(summary.entities[0]).toMatchObject({ entity: 'coupon', read: 20, due: 20 });
    await waitFor('the existing rows expired', async () => ((await count(db, 'coupons', 'EXPIRED', existing)) === 20 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
  });
});
