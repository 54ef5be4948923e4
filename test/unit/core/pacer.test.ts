/**
 * The pacer on injected signals and an injected clock: a drain starts at the start rate and
 * doubles while healthy, then runs unpaced; it backs off on a rising signal (and names it),
 * recovers once it falls, never below what the lateness budget needs, and unlimited once the
 * oldest due row is about to run out of budget.
 */
import { DEFAULT_PACER_SETTINGS, Pacer, type Backlog, type PacerView } from '../../../src/core/pacer';

/** The signal tests start unpaced, as a drain already past its start is. */
const STARTED = { ...DEFAULT_PACER_SETTINGS, startRate: Number.POSITIVE_INFINITY };

function harness(settings = STARTED) {
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const pacer = new Pacer(settings, clock);
  /** One second: `rows` committed in batches of 500 taking `latencyMs` each, then an adjustment. */
  const second = (o: { rows?: number; latencyMs?: number; backlog?: Backlog } = {}): PacerView => {
    const rows = o.rows ?? 5_000;
    for (let sent = 0; sent < rows; sent += 500) {
      now += 1_000 / Math.ceil(rows / 500);
      pacer.observeBatch(Math.min(500, rows - sent), o.latencyMs ?? 100);
    }
    if (rows === 0) now += 1_000;
    return pacer.adjust(o.backlog ?? { dueRows: 0 });
  };
  return { pacer, second, now: () => now };
}

test('a database that shows no signal is never backed off: a drain runs as fast as it can once started', () => {
  const h = harness();
  h.pacer.observeSignals({ threadsRunning: 5, historyListLength: 300 });
  for (let s = 0; s < 30; s += 1) {
    const v = h.second({ rows: 5_000, latencyMs: 100 + (s % 3) * 50 });
    expect(v).toMatchObject({ rate: Number.POSITIVE_INFINITY, state: 'healthy' });
    expect(v.limitedBy).toBeUndefined();
  }
});

test('a drain on a quiet database starts at the start rate, doubles each second while healthy, and is unpaced once the rate no longer holds it back', () => {
  const h = harness(DEFAULT_PACER_SETTINGS);
  const start = DEFAULT_PACER_SETTINGS.startRate;
  expect(h.second({ rows: 0 })).toMatchObject({ state: 'healthy', rate: start });
  const capacity = 11_000; // what the database takes at most
  const backlog = { dueRows: 150_000 };
  const views: PacerView[] = [];
  let v = h.pacer.current;
  for (let s = 0; s < 12 && !(v.rate === Number.POSITIVE_INFINITY); s += 1) {
    v = h.second({ rows: Math.min(capacity, v.rate), backlog });
    views.push(v);
  }
  expect(views.map((x) => x.rate)).toEqual([start, 2 * start, 4 * start, 8 * start, 16 * start, 32 * start, Number.POSITIVE_INFINITY]);
  expect(views.slice(0, -1).every((x) => x.state === 'starting')).toBe(true);
  expect(v).toMatchObject({ state: 'healthy' });
  // Stays unpaced while it drains; five quiet seconds later the next drain starts gently again.
  expect(h.second({ rows: capacity, backlog }).rate).toBe(Number.POSITIVE_INFINITY);
  for (let s = 0; s < 6; s += 1) v = h.second({ rows: 0 });
  expect(v).toMatchObject({ state: 'healthy', rate: start });
});

test('a drain that meets a signal while it starts backs off from what the database took', () => {
  const h = harness(DEFAULT_PACER_SETTINGS);
  const backlog = { dueRows: 150_000 };
  let v = h.second({ rows: 0, backlog });
  v = h.second({ rows: v.rate, backlog });
  expect(v).toMatchObject({ state: 'starting', rate: 2_000 });
  h.pacer.observeSignals({ threadsRunning: 60 });
  v = h.second({ rows: 2_000, backlog });
  expect(v).toMatchObject({ state: 'backing-off', limitedBy: 'threads_running', rate: 1_400 });
});

test("a second's probe tail far above its quiet baseline backs off; the probes during the expirer's own work never become the baseline", () => {
  const h = harness();
  const probes = (ms: number, n = 10) => {
    for (let i = 0; i < n; i += 1) h.pacer.observeProbe(ms + (i % 3) * 0.05);
  };
  // Quiet: a baseline of about 0.3 ms.
  for (let s = 0; s < 5; s += 1) {
    probes(0.3);
    h.second({ rows: 0 });
  }
  // The expirer works and the answers slow to 0.9 ms (within max(4 × 0.3, 0.3 + 1) = 1.3 ms): no signal, however long.
  let v = h.pacer.current;
  for (let s = 0; s < 60; s += 1) {
    h.pacer.working();
    probes(0.9);
    v = h.second({ rows: 5_000 });
    expect(v.state).toBe('healthy');
  }
  // Answers at 5 ms: over, and named.
  h.pacer.working();
  probes(5);
  v = h.second({ rows: 5_000 });
  expect(v).toMatchObject({ state: 'backing-off', limitedBy: 'probe_latency' });
});

test('one stray slow probe in ten is not a signal, two are; a second with too few probes says nothing', () => {
  const h = harness();
  for (let s = 0; s < 5; s += 1) {
    for (let i = 0; i < 10; i += 1) h.pacer.observeProbe(0.3);
    h.second({ rows: 0 });
  }
  for (let s = 0; s < 10; s += 1) {
    h.pacer.working();
    for (let i = 0; i < 10; i += 1) h.pacer.observeProbe(i === s ? 40 : 0.35);
    expect(h.second({ rows: 5_000 }).state).toBe('healthy');
  }
  for (let i = 0; i < 4; i += 1) h.pacer.observeProbe(50);
  expect(h.second({ rows: 5_000 }).state).toBe('healthy');
  for (let i = 0; i < 10; i += 1) h.pacer.observeProbe(i < 2 ? 40 : 0.35);
  expect(h.second({ rows: 5_000 })).toMatchObject({ state: 'backing-off', limitedBy: 'probe_latency' });
});

test('slower probes on a quiet database become its baseline: a server that is slower for good is not a signal for ever', () => {
  const h = harness();
  for (let s = 0; s < 5; s += 1) {
    for (let i = 0; i < 10; i += 1) h.pacer.observeProbe(0.3);
    h.second({ rows: 0 });
  }
  // The application's own load doubles the answers to 3 ms, the expirer idle: over at first ...
  for (let i = 0; i < 10; i += 1) h.pacer.observeProbe(3);
  expect(h.second({ rows: 0 }).limitedBy).toBe('probe_latency');
  // ... the norm a minute later.
  let v = h.pacer.current;
  for (let s = 0; s < 60; s += 1) {
    for (let i = 0; i < 10; i += 1) h.pacer.observeProbe(3);
    v = h.second({ rows: 0 });
  }
  for (let i = 0; i < 10; i += 1) h.pacer.observeProbe(3);
  h.pacer.working();
  expect(h.second({ rows: 5_000 }).limitedBy).toBeUndefined();
  expect(v.state).not.toBe('backing-off');
});

test('Threads_running over its threshold cuts the rate from what the database took, further each second it stays over, and names the signal', () => {
  const h = harness();
  h.second();
  h.pacer.observeSignals({ threadsRunning: 40 });
  const first = h.second({ rows: 5_000 });
  expect(first).toMatchObject({ state: 'backing-off', limitedBy: 'threads_running' });
  expect(first.rate).toBeCloseTo(5_000 * 0.7, 0);
  const second = h.second({ rows: 3_500 });
  expect(second.rate).toBeLessThan(first.rate);
  expect(second.limitedBy).toBe('threads_running');
  for (let s = 0; s < 30; s += 1) h.second({ rows: 100 });
  expect(h.pacer.current.rate).toBe(DEFAULT_PACER_SETTINGS.minRate);
});

test('once the signal falls the rate climbs back step by step, and the database is unpaced again', () => {
  const h = harness();
  h.second();
  h.pacer.observeSignals({ historyListLength: 150_000 });
  const cut = h.second({ rows: 5_000 });
  expect(cut.limitedBy).toBe('history_list');
  h.pacer.observeSignals({ historyListLength: 2_000 });
  const rates: number[] = [];
  let view = h.pacer.current;
  for (let s = 0; s < 40 && view.state !== 'healthy'; s += 1) {
    view = h.second({ rows: Math.min(5_000, Math.floor(view.rate)), backlog: { dueRows: 50_000 } });
    rates.push(view.rate);
    if (view.state === 'backing-off') expect(view.limitedBy).toBe('history_list');
    else if (view.state !== 'healthy') expect(view.state).toBe('starting'); // back at the ceiling, probing upwards
  }
  expect(rates.length).toBeGreaterThan(3); // additive: not back at once
  expect(rates.slice(0, -1)).toEqual([...rates.slice(0, -1)].sort((a, b) => a - b));
  expect(view).toMatchObject({ rate: Number.POSITIVE_INFINITY, state: 'healthy' });
  expect(view.limitedBy).toBeUndefined();
});

test('commit latency far above its quiet baseline backs off; the same latency from the start is the baseline', () => {
  const steady = harness();
  for (let s = 0; s < 10; s += 1) expect(steady.second({ latencyMs: 900 }).state).toBe('healthy');

  const h = harness();
  for (let s = 0; s < 5; s += 1) h.second({ latencyMs: 100 });
  let v = h.second({ latencyMs: 100 });
  for (let s = 0; s < 5 && v.state === 'healthy'; s += 1) v = h.second({ latencyMs: 1_000 });
  expect(v).toMatchObject({ state: 'backing-off', limitedBy: 'commit_latency' });
});

test('a slower batch within the factor of its baseline is not a signal', () => {
  const h = harness();
  for (let s = 0; s < 5; s += 1) h.second({ latencyMs: 200 });
  for (let s = 0; s < 10; s += 1) expect(h.second({ latencyMs: 380 }).state).toBe('healthy');
});

test('replica lag is a signal when given', () => {
  const h = harness();
  h.second();
  h.pacer.observeSignals({ threadsRunning: 3, replicaLagMs: 2_500 });
  expect(h.second()).toMatchObject({ state: 'backing-off', limitedBy: 'replica_lag' });
});

test('the worst signal over its threshold is the one named', () => {
  const h = harness();
  h.second();
  h.pacer.observeSignals({ threadsRunning: 30, historyListLength: 400_000 });
  expect(h.second().limitedBy).toBe('history_list');
});

test('the budget is the floor: a backlog is spread over the planned share of its budget, and the state says the budget sets the rate', () => {
  const h = harness();
  h.second();
  h.pacer.observeSignals({ threadsRunning: 100 });
  for (let s = 0; s < 30; s += 1) h.second({ rows: 50 });
  expect(h.pacer.current.rate).toBe(DEFAULT_PACER_SETTINGS.minRate);
  const oldestDueAtMs = h.now();
  const backlog = { dueRows: 90_000, oldestDueAtMs, budgetMs: 120_000 };
  const v = h.second({ rows: 0, backlog });
  // 90,000 rows by 90 s after the oldest's due time (3/4 of 120 s), 1 s of which has gone.
  expect(v.budgetRate).toBeCloseTo(90_000 / 89, 0);
  expect(v).toMatchObject({ state: 'budget-bound', limitedBy: 'threads_running', rate: v.budgetRate });
  expect(v.healthRate).toBe(DEFAULT_PACER_SETTINGS.minRate);
  expect(v.budgetUsed).toBeCloseTo(1 / 120, 3);
});

test('the budget needs more as the oldest row ages, and lifts the limit once less than a second of its plan is left', () => {
  const h = harness();
  h.second();
  h.pacer.observeSignals({ threadsRunning: 100 });
  const oldestDueAtMs = h.now();
  const needs: number[] = [];
  let v: PacerView;
  do {
    v = h.second({ rows: 50, backlog: { dueRows: 10_000, oldestDueAtMs, budgetMs: 120_000 } });
    needs.push(v.budgetRate);
  } while (v.rate !== Number.POSITIVE_INFINITY && needs.length < 200);
  expect(needs.length).toBeGreaterThan(60);
  expect(needs.slice(0, -1)).toEqual([...needs.slice(0, -1)].sort((a, b) => a - b));
  expect(v).toMatchObject({ rate: Number.POSITIVE_INFINITY, state: 'budget-bound' });
  // Lifted before the plan's end (90 s), far inside the budget (120 s).
  expect(h.now() - oldestDueAtMs).toBeLessThanOrEqual(90_000);
});

test('a backlog the health rate already covers is not budget-bound; no due rows need nothing', () => {
  const h = harness();
  h.second();
  h.pacer.observeSignals({ threadsRunning: 30 });
  const v = h.second({ rows: 5_000, backlog: { dueRows: 100, oldestDueAtMs: h.now(), budgetMs: 120_000 } });
  expect(v.state).toBe('backing-off');
  expect(v.rate).toBe(v.healthRate);
  expect(h.second({ rows: 100, backlog: { dueRows: 0 } }).budgetRate).toBe(0);
});
