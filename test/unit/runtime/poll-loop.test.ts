/** The one polling loop (runtime/poll-loop.ts): retries what may pass, fails loudly on what will not, stops at once. */
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/ops/logger';
import { PollLoop, type PollLoopOptions } from '../../../src/runtime/poll-loop';
import { group } from '../../../src/runtime/group';

const retriable = Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
const deterministic = Object.assign(new Error("Table 'event_outbox' doesn't exist"), { errno: 1146 });

/** Resolves once `n` ticks have run. */
function ticker(behaviour: (n: number) => Promise<void>) {
  let n = 0;
  const waiters: Array<{ at: number; resolve: () => void }> = [];
  const tick = async () => {
    n += 1;
    for (const w of waiters.filter((x) => x.at <= n)) w.resolve();
    await behaviour(n);
  };
  return { tick, count: () => n, reached: (at: number) => new Promise<void>((resolve) => (n >= at ? resolve() : waiters.push({ at, resolve }))) };
}

const loopOf = (tick: PollLoopOptions['tick'], over: Partial<PollLoopOptions> = {}) =>
  new PollLoop({ name: 'test loop', tick, intervalMs: 1, backoff: { baseMs: 1, maxMs: 2 }, logger: createLogger('silent'), ...over });

test('a retriable failure is counted and retried for as long as it lasts; the loop stays healthy', async () => {
  const failures: string[] = [];
  const t = ticker(async (n) => {
    if (n <= 5) throw retriable;
  });
  const loop = loopOf(t.tick, { onFailure: (_err, kind) => failures.push(kind) });
  loop.start();
  await t.reached(8);
  await loop.stop();
  expect(failures).toEqual(['retriable', 'retriable', 'retriable', 'retriable', 'retriable']);
  expect(loop.health()).toEqual({ ok: true });
  expect(loop.lifecycle).toBe('STOPPED');
});

test('deterministic failures in a row turn it FAILED: no more ticks, `failed` resolves, health names it', async () => {
  const failures: string[] = [];
  const t = ticker(async () => {
    throw deterministic;
  });
  const loop = loopOf(t.tick, { onFailure: (_err, kind) => failures.push(kind) });
  loop.start();
  await expect(loop.failed()).resolves.toBe(deterministic);
  expect(loop.lifecycle).toBe('FAILED');
  expect(t.count()).toBe(3);
  expect(failures).toEqual(['deterministic', 'deterministic', 'deterministic']);
  expect(loop.health()).toEqual({ ok: false, reason: "test loop FAILED: Table 'event_outbox' doesn't exist" });
  await loop.stop();
  expect(loop.lifecycle).toBe('FAILED');
});

test('a tick that passes, or a retriable failure, between deterministic ones starts the count again', async () => {
  const t = ticker(async (n) => {
    if ([1, 2, 4, 5, 7, 8].includes(n)) throw deterministic;
    if (n === 6) throw retriable;
  });
  const loop = loopOf(t.tick);
  loop.start();
  await t.reached(12);
  expect(loop.lifecycle).toBe('RUNNING');
  await loop.stop();
});

test('stop() wakes the wait at once, waits for nothing more, and is idempotent', async () => {
  const t = ticker(async () => undefined);
  const loop = loopOf(t.tick, { intervalMs: 3_600_000 });
  loop.start();
  loop.start();
  await t.reached(1);
  // Well inside jest's 5 s: an hour's wait that stop() did not cut short fails the test.
  await loop.stop();
  await loop.stop();
  expect(loop.lifecycle).toBe('STOPPED');
  expect(t.count()).toBe(1);
});

test('a tick stuck past the stop deadline is abandoned, named in the log, and stop() still ends', async () => {
  const lines: string[] = [];
  const logger = createLogger('warn', {}, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
  const t = ticker(() => new Promise<void>(() => undefined));
  const loop = loopOf(t.tick, { stopDeadlineMs: 20, logger });
  loop.start();
  await t.reached(1);
  await loop.stop();
  expect(loop.lifecycle).toBe('STOPPED');
  expect(lines.join('')).toMatch(/a tick outlived the stop deadline; abandoned/);
});

test('a group of several loops fails with the first that fails and names each failed one', async () => {
  const healthy = loopOf(async () => undefined, { name: 'healthy loop' });
  const broken = loopOf(
    async () => {
      throw deterministic;
    },
    { name: 'broken loop' },
  );
  const watch = group('loops', { healthy, broken });
  await watch.start();
  await expect(watch.failed()).resolves.toBe(deterministic);
  expect(watch.health()).toEqual({ ok: false, reason: "broken loop FAILED: Table 'event_outbox' doesn't exist" });
  await healthy.stop();
});

test('a second stop() returns the first one: it settles only once the tick in flight is over', async () => {
  let finish!: () => void;
  const t = ticker(() => new Promise<void>((resolve) => (finish = resolve)));
  const loop = loopOf(t.tick);
  await loop.start();
  await t.reached(1);
  const first = loop.stop();
  const second = loop.stop();
  expect(second).toBe(first);
  let over = false;
  void second.then(() => (over = true));
  await new Promise((resolve) => setImmediate(resolve));
  expect([over, loop.lifecycle]).toEqual([false, 'STOPPING']);
  finish();
  await second;
  expect(loop.lifecycle).toBe('STOPPED');
});
