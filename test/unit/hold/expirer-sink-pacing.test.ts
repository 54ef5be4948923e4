/**
 * The expirer under its databases' pacers (hold/database-pacing.ts): a database whose signals are
 * over their thresholds takes its rows slower, still earliest due first, never before due, and
 * every row within its entity's lateness budget; a burst on a quiet database starts at the start
 * rate in small batches and doubles; unpaced it fires as before; the operator's throttle still
 * caps it (the lower wins).
 */
import type { Transition } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import { DEFAULT_PACER_SETTINGS, type PacerView, type ServerSignals } from '../../../src/core/pacer';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { createDatabasePacing } from '../../../src/hold/database-pacing';
import { ExpirerSink } from '../../../src/hold/expirer-sink';
import { createTransitionGate } from '../../../src/control/gate';
import { createLogger } from '../../../src/ops/logger';
import { heldMessage } from '../../support/fake-held-message';
import { fakeSwitches } from '../../support/fake-switches';
import defaultEntities from '../../../entities/default.json';

const T0 = 1_700_000_000_000;
const clock = { now: () => Date.now() };

/** The default entities, coupons with a lateness budget of `couponBudgetS` seconds. */
function catalogueWith(couponBudgetS?: number) {
  const file = JSON.parse(JSON.stringify(defaultEntities)) as { entities: Array<Record<string, unknown>> };
  if (couponBudgetS !== undefined) file.entities.find((e) => e['name'] === 'coupon')!['latenessBudgetSeconds'] = couponBudgetS;
  return parseEntityFile(file, 'entities/default.json');
}

/** Most tests start unpaced, as a drain already past its start does; the start has its own test. */
const STARTED = { ...DEFAULT_PACER_SETTINGS, startRate: Number.POSITIVE_INFINITY };

function harness(o: { couponBudgetS?: number; maxBatchSize?: number; replicaLagMs?: () => number | undefined; settings?: typeof DEFAULT_PACER_SETTINGS } = {}) {
  let signals: ServerSignals = { threadsRunning: 3, historyListLength: 10 };
  const views: PacerView[] = [];
  const switches = fakeSwitches();
  const pacing = createDatabasePacing({
    databases: ['main'],
    settings: o.settings ?? STARTED,
    clock,
    intervalMs: 1_000,
    readSignals: async () => signals,
    ...(o.replicaLagMs !== undefined && { replicaLagMs: o.replicaLagMs }),
    onView: (_database, view) => views.push(view),
    logger: createLogger('silent'),
  });
  const calls: Array<{ ids: string[]; dues: number[]; at: number }> = [];
  const sink = new ExpirerSink({
    catalogue: catalogueWith(o.couponBudgetS),
    expireBatch: async (_t: Transition, entries: readonly ScheduledEntry[]): Promise<BatchOutcome> => {
      calls.push({ ids: entries.map((e) => e.id), dues: entries.map((e) => e.expireAtMs), at: Date.now() });
      return { transitioned: entries.map((e) => ({ id: e.id, dueAtMs: e.expireAtMs })), notYetDue: [], stale: [], dbNowMs: Date.now() };
    },
    clock,
    maxBatchSize: o.maxBatchSize ?? 500,
    maxConcurrentBatches: 4,
    backoff: { baseMs: 100, maxMs: 1_000 },
    maxAttempts: 3,
    cutOverGraceMs: 10_000,
    park: async () => undefined,
    logger: createLogger('silent'),
    gate: createTransitionGate(switches.reader, clock),
    pacing,
  });
  const done = new Map<string, number>();
  const take = (id: string, expireAtMs: number) => sink.take(heldMessage({ entity: 'coupon', id, expireAtMs }), () => done.set(id, Date.now()));
  const sent = () => calls.flatMap((c) => c.ids);
  return { sink, switches, calls, done, take, sent, views, setSignals: (s: ServerSignals) => (signals = s) };
}

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

/** Rows due in ms order, ids padded so that their order is their due order. */
function burst(h: ReturnType<typeof harness>, n: number, dueAt: number): Map<string, number> {
  const dues = new Map<string, number>();
  for (let i = 0; i < n; i += 1) {
    const id = `c${String(i).padStart(5, '0')}`;
    dues.set(id, dueAt + Math.floor(i / 100));
    h.take(id, dueAt + Math.floor(i / 100));
  }
  return dues;
}

test('healthy: a burst fires as it did unpaced, all at its due time', async () => {
  const h = harness();
  await jest.advanceTimersByTimeAsync(3_000);
  burst(h, 2_000, T0 + 5_000);
  await jest.advanceTimersByTimeAsync(2_100);
  expect(h.sent()).toHaveLength(2_000);
  expect(h.views.at(-1)).toMatchObject({ state: 'healthy', rate: Number.POSITIVE_INFINITY });
});

test('a burst on a quiet database starts at the start rate, in batches of a tenth of a second, doubles while healthy, and starts gently again once quiet', async () => {
  const h = harness({ settings: DEFAULT_PACER_SETTINGS, maxBatchSize: 2_000 });
  await jest.advanceTimersByTimeAsync(3_000);
  const dues = burst(h, 20_000, Date.now() + 100);
  await jest.advanceTimersByTimeAsync(1_100);
  // The first second: about the start rate (1,000), in batches of about 100 rows.
  const first = h.sent().length;
  expect(first).toBeGreaterThanOrEqual(900);
  expect(first).toBeLessThanOrEqual(2_100); // the bucket starts with a second saved up
  expect(Math.max(...h.calls.map((c) => c.ids.length))).toBeLessThanOrEqual(100);
  expect(h.views.at(-1)).toMatchObject({ state: 'starting' });
  await jest.advanceTimersByTimeAsync(15_000);
  expect(h.views.some((v) => v.state === 'starting' && v.rate >= 4_000)).toBe(true);
  expect(h.sent()).toEqual([...dues.keys()]); // all of them, once each, earliest due first
  for (const c of h.calls) for (const due of c.dues) expect(c.at).toBeGreaterThanOrEqual(due);
  // Drained and quiet since: the next burst starts gently again.
  expect(h.views.at(-1)).toMatchObject({ state: 'healthy', rate: DEFAULT_PACER_SETTINGS.startRate });
});

test('Threads_running over its threshold slows a burst down; it still goes earliest due first, none early, each within its budget', async () => {
  const h = harness({ couponBudgetS: 40 });
  h.setSignals({ threadsRunning: 80, historyListLength: 10 });
  h.take('warm', T0); // the database takes a little, then the pacer cuts to its floor
  await jest.advanceTimersByTimeAsync(10_000);
  expect(h.views.at(-1)).toMatchObject({ state: 'backing-off', limitedBy: 'threads_running', rate: DEFAULT_PACER_SETTINGS.minRate });

  const dueAt = T0 + 12_000;
  const dues = burst(h, 5_000, dueAt);
  await jest.advanceTimersByTimeAsync(2_000 + 2_000);
  // Two seconds past due: far fewer than unpaced (all 5,000 at once).
  const early = h.sent().length;
  expect(early).toBeGreaterThan(0);
  expect(early).toBeLessThan(2_000);
  expect(h.views.at(-1)).toMatchObject({ state: 'budget-bound', limitedBy: 'threads_running' });

  await jest.advanceTimersByTimeAsync(40_000);
  const order = h.sent().filter((id) => id !== 'warm');
  expect(order).toEqual([...dues.keys()]); // once each, earliest due first
  for (const c of h.calls) for (const due of c.dues) expect(c.at).toBeGreaterThanOrEqual(due); // never early
  for (const [id, due] of dues) expect(h.done.get(id)! - due).toBeLessThanOrEqual(40_000); // within the budget
});

test("the operator's throttle caps a pacer that allows more; the pacer caps a throttle that allows more", async () => {
  const h = harness({ maxBatchSize: 1_000 });
  h.switches.throttle('coupon', 10);
  burst(h, 200, T0 + 100);
  await jest.advanceTimersByTimeAsync(100);
  await jest.advanceTimersByTimeAsync(3_000);
  // Unpaced (healthy): the throttle alone, 10 a second plus the second saved up.
  expect(h.sent()).toHaveLength(40);

  const p = harness({ maxBatchSize: 1_000 });
  p.setSignals({ threadsRunning: 80 });
  p.take('warm', T0);
  await jest.advanceTimersByTimeAsync(10_000); // the pacer at its floor, 50 a second
  p.switches.throttle('coupon', 1_000);
  burst(p, 2_000, Date.now());
  await jest.advanceTimersByTimeAsync(3_000);
  const sent = p.sent().length - 1;
  expect(sent).toBeLessThan(1_000); // not the throttle's 3,000+
  expect(sent).toBeGreaterThan(0);
});

test('a signal that falls lets the database go unpaced again', async () => {
  const h = harness();
  h.setSignals({ threadsRunning: 80 });
  h.take('warm', T0);
  await jest.advanceTimersByTimeAsync(5_000);
  expect(h.views.at(-1)!.state).toBe('backing-off');
  h.setSignals({ threadsRunning: 2 });
  await jest.advanceTimersByTimeAsync(30_000);
  expect(h.views.at(-1)).toMatchObject({ state: 'healthy', rate: Number.POSITIVE_INFINITY });
  burst(h, 3_000, Date.now());
  await jest.advanceTimersByTimeAsync(30); // the burst's last rows are due 29 ms from now
  expect(h.sent()).toHaveLength(3_001);
});

test("a replica's lag by the heartbeat is a signal: over its threshold the database backs off on replica_lag, and recovers once it falls", async () => {
  let lag: number | undefined = 200;
  const h = harness({ replicaLagMs: () => lag });
  h.take('warm', T0);
  await jest.advanceTimersByTimeAsync(3_000);
  expect(h.views.at(-1)!.state).toBe('healthy');
  lag = 4_000;
  await jest.advanceTimersByTimeAsync(2_000);
  expect(h.views.at(-1)).toMatchObject({ state: 'backing-off', limitedBy: 'replica_lag' });
  lag = undefined; // unknown (no answer from the replica): no signal
  await jest.advanceTimersByTimeAsync(30_000);
  expect(h.views.at(-1)).toMatchObject({ state: 'healthy' });
});

test("due entries the consumer has not read yet (past its memory cap) count in the budget's backlog", async () => {
  const budgetOf = async (unread: number) => {
    const views: PacerView[] = [];
    const pacing = createDatabasePacing({
      databases: ['main'],
      settings: STARTED,
      clock,
      intervalMs: 1_000,
      readSignals: async () => ({ threadsRunning: 80 }),
      unreadDue: () => unread,
      onView: (_database, view) => views.push(view),
      logger: createLogger('silent'),
    });
    const oldestDueAtMs = Date.now();
    const stop = pacing.attach({ backlogOf: () => ({ dueRows: 1_000, oldestDueAtMs, budgetMs: 120_000 }), wake: () => undefined });
    await jest.advanceTimersByTimeAsync(2_000);
    stop();
    return views.at(-1)!;
  };
  const inMemoryOnly = await budgetOf(0);
  const withUnread = await budgetOf(49_000);
  // 50,000 rows in all need fifty times the rate of the 1,000 in memory.
  expect(withUnread.budgetRate / inMemoryOnly.budgetRate).toBeCloseTo(50, 0);
  expect(withUnread).toMatchObject({ state: 'budget-bound' });
});
