import type { Db } from '../../../src/db/knex';
import { Foreground } from '../../../bench/lib/foreground';

/** A database whose every wallet read waits until `release()`: a stall. */
function stalledDb() {
  let release!: () => void;
  const stall = new Promise<void>((resolve) => (release = resolve));
  let reads = 0;
  const chain: Record<string, unknown> = {};
  for (const m of ['where', 'orderBy', 'limit']) chain[m] = () => chain;
  chain['select'] = () => {
    reads += 1;
    return stall.then(() => []);
  };
  const db = Object.assign(() => chain, { raw: () => 'raw' }) as unknown as Db;
  return { db, release: () => release(), reads: () => reads };
}

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => jest.useRealTimers());

test('open loop: requests keep being sent on schedule through a stall, and each counts from its scheduled start', async () => {
  const s = stalledDb();
  // random() = 0: every request is a wallet read of the first user.
  const fg = new Foreground({ db: s.db, rate: 100, users: 1, userBase: 1, random: () => 0 });
  fg.start('drain');
  await jest.advanceTimersByTimeAsync(95);
  // Scheduled at 0, 10, …, 90 ms: all ten sent although none has answered (a closed loop would have sent one).
  expect(s.reads()).toBe(10);
  await jest.advanceTimersByTimeAsync(5);
  s.release();
  const [drain] = await fg.stop();
  expect(drain!.all.count).toBe(11);
  expect(drain!.all.errors).toBe(0);
  // The first waited the whole stall, from its scheduled start; the median about half of it.
  expect(drain!.all.max_ms).toBeCloseTo(100, 0);
  expect(drain!.all.p50_ms).toBeGreaterThanOrEqual(40);
  expect(drain!.all.p50_ms).toBeLessThanOrEqual(60);
  expect(drain!.ops.wallet.count).toBe(11);
});

test('past maxInFlight a request is shed and counted as an error, never queued without bound', async () => {
  const s = stalledDb();
  const fg = new Foreground({ db: s.db, rate: 100, users: 1, userBase: 1, random: () => 0, maxInFlight: 3 });
  fg.start('drain');
  await jest.advanceTimersByTimeAsync(95);
  expect(s.reads()).toBe(3);
  s.release();
  const [drain] = await fg.stop();
  expect(drain!.all.count).toBe(3);
  expect(drain!.all.errors).toBe(7);
});

test('phases: what is scheduled after phase() is measured there', async () => {
  const s = stalledDb();
  s.release();
  const fg = new Foreground({ db: s.db, rate: 100, users: 1, userBase: 1, random: () => 0 });
  fg.start('alone');
  await jest.advanceTimersByTimeAsync(45);
  fg.phase('drain');
  await jest.advanceTimersByTimeAsync(30);
  const phases = await fg.stop();
  expect(phases.map((p) => [p.phase, p.all.count])).toEqual([
    ['alone', 5],
    ['drain', 3],
  ]);
});
