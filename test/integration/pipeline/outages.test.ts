/**
 * Outages mid-flow, the pipeline running throughout: the database refusing the application for
 * 20 s, and the broker frozen for 8 s (its requests time out; Connect stops publishing until it
 * returns). Afterwards, without a restart: every coupon transitioned exactly once and never
 * early, every event published, the circuit breakers closed again and the process healthy.
 *
 * @lane exclusive
 */
import { createDb, Db } from '../../../src/db/knex';
import type { Running } from '../../../src/main';
import { config as baseConfig } from '../../support/stack';
import { collectEvents } from '../../support/events';
import { outboxKeys } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { freezeKafka, lockOutApplication } from '../../support/stack-control';
import { waitFor } from '../../support/wait-for';
import { countInStatus } from '../../support/counts';

let db: Db;
let pipeline: TestPipeline | undefined;
const marker = 5_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
let undo: (() => void) | undefined;

beforeAll(() => {
  db = createDb(baseConfig.db);
});

afterEach(async () => {
  undo?.();
  undo = undefined;
  await pipeline?.stopAll();
  pipeline = undefined;
});

afterAll(async () => {
  await db.destroy();
});

async function insertCoupons(count: number, fromMs: number, spreadMs: number): Promise<number[]> {
  const rows = Array.from({ length: count }, (_, i) => ({
    user_id: marker,
    status: 'ACTIVE',
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor((fromMs + (spreadMs * i) / count) * 1000)]),
  }));
  const [first] = await db('coupons').insert(rows);
  return rows.map((_, i) => first! + i);
}

const countExpired = (ids: number[]) => countInStatus(db, 'coupons', 'EXPIRED', ids);

async function breakerState(name: string): Promise<number | undefined> {
  const metric = await pipeline!.metrics.breakerState.get();
  return metric.values.find((v) => v.labels['breaker'] === name)?.value;
}

/** Every producer breaker's state, by breaker name (0 closed, 1 half-open, 2 open). */
async function producerBreakerStates(): Promise<Record<string, number>> {
  const metric = await pipeline!.metrics.breakerState.get();
  return Object.fromEntries(metric.values.filter((v) => String(v.labels['breaker']).startsWith('producer')).map((v) => [String(v.labels['breaker']), v.value]));
}

/** Exactly once, never early, every event published. */
async function expectExact(ids: number[]): Promise<void> {
  const rows = (await db('coupons').whereIn('id', ids).select('expire_time', 'expired_at', 'version')) as Array<{
    expire_time: Date;
    expired_at: Date;
    version: number;
  }>;
  expect(rows.filter((r) => r.expired_at.getTime() < r.expire_time.getTime())).toEqual([]);
  expect(rows.filter((r) => r.version !== 1)).toEqual([]);
  const keys = await outboxKeys(db, pipeline!.catalogue, { entity: 'coupon', ids });
  expect(new Set(keys).size).toBe(ids.length);
  expect(keys).toHaveLength(ids.length);
  const wanted = new Set(keys);
  const events = await collectEvents(
    pipeline!.config,
    pipeline!.topology.events.map((e) => e.topic),
  );
  try {
    await waitFor(
      'every event published',
      async () => (new Set(events.events.map((e) => e.headers['event_key']).filter((k) => wanted.has(k!))).size === ids.length ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
  } finally {
    await events.stop();
  }
}

test('the database refuses the application for 20 s mid-flow: the expiry breaker opens and closes, nothing is lost', async () => {
  pipeline = await createTestPipeline();
  const running: Running = await pipeline.start();
  const ids = await insertCoupons(400, 2_000, 28_000);
  await waitFor('the flow to start', async () => ((await countExpired(ids)) >= 30 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200 });

  undo = lockOutApplication();
  await waitFor('the expiry breaker to open', async () => ((await breakerState('expiry')) === 2 ? true : undefined), { timeoutMs: 20_000, intervalMs: 100 });
  const openedAt = Date.now();
  await waitFor('20 s of outage', () => (Date.now() - openedAt >= 20_000 ? true : undefined), { timeoutMs: 25_000, intervalMs: 500 });
  expect(running.health()).toEqual({ ok: true, problems: [] }); // an outage is not a dead consumer
  undo();
  undo = undefined;

  await waitFor('every coupon expired after the outage', async () => ((await countExpired(ids)) === ids.length ? true : undefined), {
    timeoutMs: 90_000,
    intervalMs: 500,
  });
  await expectExact(ids);
  expect(await breakerState('expiry')).toBe(0);
  expect(running.health()).toEqual({ ok: true, problems: [] });
});

test('the broker frozen for 8 s mid-flow: nothing is lost or stuck, the producer breaker not left open', async () => {
  // Requests time out after 3 s and are retried once: a send gives up inside the freeze. The
  // freeze stays under the broker's session timeout (9 s): a longer one fences the one-node
  // broker from its own controller, and its partitions were seen leaderless for over a minute
  // after it (a stack's recovery, not this process's).
  // Connect publishes the events, and catches up after the freeze (expectExact); the process's
  // own consumers and producer ride it out.
  pipeline = await createTestPipeline({ env: { TB_KAFKA_REQUEST_TIMEOUT_MS: '3000', TB_KAFKA_RETRIES: '1' } });
  const running: Running = await pipeline.start();
  const ids = await insertCoupons(400, 2_000, 25_000);
  await waitFor('the flow to start', async () => ((await countExpired(ids)) >= 30 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200 });

  undo = freezeKafka();
  const frozenAt = Date.now();
  await waitFor('8 s of frozen broker', () => (Date.now() - frozenAt >= 8_000 ? true : undefined), { timeoutMs: 11_000, intervalMs: 500 });
  undo();
  undo = undefined;

  await waitFor('every coupon expired after the freeze', async () => ((await countExpired(ids)) === ids.length ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  await expectExact(ids);
  // One producer, one series: not left open (half-open until its next send, which closes it).
  const states = await waitFor(
    'the producer breaker not left open',
    async () => {
      const now = await producerBreakerStates();
      return Object.values(now).every((v) => v !== 2) ? now : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  expect(Object.keys(states)).toEqual(['producer']);
  // Whether a send fails inside the freeze depends on where the rows' entries are then (the
  // events themselves are Connect's to send); a failed send retiring its producer is
  // guarded-producer.test.ts's. Here: whatever failed, nothing was lost or left stuck.
  expect(running.health()).toEqual({ ok: true, problems: [] });
  // Its bounded waits add up past the default test timeout: a slow step then fails by its own name.
}, 300_000);
