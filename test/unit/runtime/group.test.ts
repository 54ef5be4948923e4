/** Components composed into one (runtime/group.ts): started in order, stopped in reverse, ready, failed with the first part. */
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/ops/logger';
import { group, resource } from '../../../src/runtime/group';
import type { Component, Lifecycle } from '../../../src/runtime/lifecycle';

type Fake = Component & { fail: (err: Error) => void; join: () => void };

function fake(name: string, log: string[], over: Partial<{ start: () => Promise<void>; stop: () => Promise<void> }> = {}): Fake {
  let state: Lifecycle = 'NEW';
  let fail!: (err: Error) => void;
  const failure = new Promise<Error>((resolve) => (fail = resolve));
  let join!: () => void;
  const joined = new Promise<void>((resolve) => (join = resolve));
  return {
    get lifecycle() {
      return state;
    },
    start: async () => {
      if (state !== 'NEW') return;
      log.push(`start ${name}`);
      state = 'RUNNING';
      await over.start?.();
    },
    stop: async () => {
      log.push(`stop ${name}`);
      await over.stop?.();
      state = 'STOPPED';
    },
    ready: () => joined,
    health: () => (state === 'FAILED' ? { ok: false, reason: `${name} FAILED` } : { ok: true }),
    failed: () => failure,
    fail: (err) => {
      state = 'FAILED';
      fail(err);
    },
    join,
  };
}

function capture() {
  const lines: Array<Record<string, unknown> & { msg: string }> = [];
  const logger = createLogger('warn', {}, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) }));
  return { lines, logger };
}

test('starts the parts in the order given and stops them in reverse', async () => {
  const log: string[] = [];
  const g = group('g', { a: fake('a', log), b: fake('b', log), c: fake('c', log) });
  await g.start();
  expect(g.lifecycle).toBe('RUNNING');
  await g.stop();
  expect(g.lifecycle).toBe('STOPPED');
  expect(log).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
});

test('a second start does nothing; parts started before the group are not started again', async () => {
  const log: string[] = [];
  const a = fake('a', log);
  await a.start();
  const g = group('g', { a, b: fake('b', log) });
  await g.start();
  await g.start();
  expect(log).toEqual(['start a', 'start b']);
});

test('ready once every part is ready', async () => {
  const log: string[] = [];
  const a = fake('a', log);
  const b = fake('b', log);
  const g = group('g', { a, b });
  await g.start();
  let ready = false;
  void g.ready().then(() => (ready = true));
  a.join();
  await new Promise((resolve) => setImmediate(resolve));
  expect(ready).toBe(false);
  b.join();
  await g.ready();
  expect(ready).toBe(true);
  expect(group('empty', {}).ready()).resolves.toBeUndefined();
});

test('a failed part fails the group, which names it and stays FAILED once stopped', async () => {
  const log: string[] = [];
  const a = fake('a', log);
  const b = fake('b', log);
  const g = group('g', { a, b });
  await g.start();
  const crash = new Error('consumer crashed');
  b.fail(crash);
  await expect(g.failed()).resolves.toBe(crash);
  expect(g.lifecycle).toBe('FAILED');
  expect(g.health()).toEqual({ ok: false, reason: 'b FAILED' });
  expect(g.problems()).toEqual(['b FAILED']);
  await g.stop();
  expect(g.lifecycle).toBe('FAILED');
  expect(log.slice(-2)).toEqual(['stop b', 'stop a']);
});

test('health joins every unhealthy part, problems() lists them one by one', async () => {
  const log: string[] = [];
  const a = fake('a', log);
  const b = fake('b', log);
  const g = group('g', { a, ok: fake('ok', log), b });
  await g.start();
  a.fail(new Error('x'));
  b.fail(new Error('y'));
  expect(g.health()).toEqual({ ok: false, reason: 'a FAILED; b FAILED' });
  expect(g.problems()).toEqual(['a FAILED', 'b FAILED']);
});

test('a part that fails to start is stopped with those started before it, in reverse; the error is thrown', async () => {
  const log: string[] = [];
  const refused = new Error('broker away');
  const g = group('g', {
    a: fake('a', log),
    b: fake('b', log, {
      start: async () => {
        throw refused;
      },
    }),
    c: fake('c', log),
  });
  await expect(g.start()).rejects.toBe(refused);
  expect(log).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  expect(g.lifecycle).toBe('STOPPED');
});

test('a second stop() returns the first one: it resolves only once every part has stopped', async () => {
  const log: string[] = [];
  let release!: () => void;
  const slow = fake('slow', log, { stop: () => new Promise<void>((resolve) => (release = resolve)) });
  const g = group('g', { slow });
  await g.start();
  const first = g.stop();
  const second = g.stop();
  expect(second).toBe(first);
  let done = false;
  void second.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  expect(done).toBe(false);
  release();
  await second;
  expect(log.filter((l) => l === 'stop slow')).toHaveLength(1);
});

test('every part is stopped even when one fails to stop; without a deadline the failure is thrown', async () => {
  const log: string[] = [];
  const broken = new Error('disconnect failed');
  const g = group('g', {
    a: fake('a', log),
    b: fake('b', log, {
      stop: async () => {
        throw broken;
      },
    }),
  });
  await g.start();
  await expect(g.stop()).rejects.toBe(broken);
  expect(log.slice(-2)).toEqual(['stop b', 'stop a']);
});

test('with a shared deadline a part that overruns is named and left behind, the next still stopped, a failed stop logged', async () => {
  const log: string[] = [];
  const { lines, logger } = capture();
  const g = group(
    'g',
    {
      a: fake('a', log, {
        stop: async () => {
          throw new Error('pool gone');
        },
      }),
      stuck: fake('stuck', log, { stop: () => new Promise<void>(() => undefined) }),
    },
    { stopDeadlineMs: 10, logger },
  );
  await g.start();
  await g.stop();
  expect(log.slice(-2)).toEqual(['stop stuck', 'stop a']);
  expect(lines.map((l) => [l.msg, l['part']])).toEqual([
    ['stop: a part did not stop within the shutdown deadline; left behind', 'stuck'],
    ['stop failed', 'a'],
  ]);
});

test("stopOrder 'together' asks every part to stop at once", async () => {
  const log: string[] = [];
  const gates: Array<() => void> = [];
  const held = (name: string) => fake(name, log, { stop: () => new Promise<void>((resolve) => gates.push(resolve)) });
  const g = group('g', { a: held('a'), b: held('b') }, { stopOrder: 'together' });
  await g.start();
  const stopping = g.stop();
  await new Promise((resolve) => setImmediate(resolve));
  expect(log.slice(-2).sort()).toEqual(['stop a', 'stop b']);
  gates.forEach((open) => open());
  await stopping;
  expect(g.lifecycle).toBe('STOPPED');
});

test('a resource opens on start, closes once on stop, and is always healthy and ready', async () => {
  const calls: string[] = [];
  const r = resource(
    async () => void calls.push('close'),
    async () => void calls.push('open'),
  );
  await r.start();
  await r.start();
  expect(r.lifecycle).toBe('RUNNING');
  expect(r.health()).toEqual({ ok: true });
  await expect(r.ready()).resolves.toBeUndefined();
  await Promise.all([r.stop(), r.stop()]);
  expect(r.lifecycle).toBe('STOPPED');
  expect(calls).toEqual(['open', 'close']);
});
