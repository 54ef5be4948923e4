/** The consumer base (runtime/consumer-base.ts): one state, watch, failure and stop for every stage over a group consumer. */
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/ops/logger';
import { ConsumerBase, type ConsumerLiveness } from '../../../src/runtime/consumer-base';
import type { Health } from '../../../src/runtime/lifecycle';

class Stage extends ConsumerBase {
  readonly steps: string[] = [];
  ticks = 0;
  settleWith: Promise<unknown> = Promise.resolve();
  startUp: () => Promise<void> = async () => undefined;

  constructor(
    readonly consumer: { disconnect: () => Promise<void> },
    logger = createLogger('silent'),
    stopDeadlineMs?: number,
  ) {
    super({ consumer, group: 'g.stage', logger, failedMessage: 'stage FAILED', ...(stopDeadlineMs !== undefined && { stopDeadlineMs }) });
  }

  async start(): Promise<void> {
    if (!this.begin(new Promise<void>(() => undefined))) return;
    await this.startConsumer(this.startUp);
    this.every(1, async () => void (this.ticks += 1));
  }

  watchWith(liveness: ConsumerLiveness): void {
    this.watch(liveness);
  }

  get isActive(): boolean {
    return this.active;
  }

  protected halt(): void {
    this.steps.push('halt');
  }

  protected settle(): readonly [string, Promise<unknown>] {
    this.steps.push('settle');
    return ['last commit', this.settleWith];
  }

  protected override release(): void {
    this.steps.push('release');
  }
}

function liveness(health: Health = { ok: true }) {
  let crash!: (err: Error) => void;
  const failed = new Promise<Error>((resolve) => (crash = resolve));
  let stopped = 0;
  return { liveness: { health: () => health, failed, stop: () => void (stopped += 1) }, crash, stopped: () => stopped };
}

function capture() {
  const lines: Array<{ msg: string; step?: string; group?: string }> = [];
  const logger = createLogger('warn', {}, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) }));
  return { lines, logger };
}

test('stop() halts, settles, leaves the group and releases, in that order; the watch ends first', async () => {
  const calls: string[] = [];
  const stage = new Stage({ disconnect: async () => void calls.push('disconnect') });
  await stage.start();
  const w = liveness();
  stage.watchWith(w.liveness);
  expect(stage.lifecycle).toBe('RUNNING');
  await stage.stop();
  expect(stage.lifecycle).toBe('STOPPED');
  expect(stage.steps).toEqual(['halt', 'settle', 'release']);
  expect(calls).toEqual(['disconnect']);
  expect(w.stopped()).toBe(1);
});

test('a concurrent stop() returns the first one: it settles only when the first stop is over, and the work is done once', async () => {
  let disconnects = 0;
  let leave!: () => void;
  const stage = new Stage({ disconnect: () => new Promise<void>((resolve) => ((disconnects += 1), (leave = resolve))) });
  await stage.start();
  const first = stage.stop();
  const second = stage.stop();
  expect(second).toBe(first);
  let over = false;
  void second.then(() => (over = true));
  await new Promise((resolve) => setImmediate(resolve));
  expect(over).toBe(false);
  expect(stage.lifecycle).toBe('STOPPING');
  leave();
  await second;
  expect(stage.lifecycle).toBe('STOPPED');
  expect([disconnects, stage.steps.filter((s) => s === 'release').length]).toEqual([1, 1]);
});

test('stop() gives up on a step past its deadline, names it, and still leaves the group and releases', async () => {
  const { lines, logger } = capture();
  const stage = new Stage({ disconnect: () => new Promise<void>(() => undefined) }, logger, 20);
  await stage.start();
  stage.settleWith = new Promise(() => undefined);
  const t0 = Date.now();
  await stage.stop();
  expect(Date.now() - t0).toBeLessThan(2_000);
  expect(stage.lifecycle).toBe('STOPPED');
  expect(stage.steps).toEqual(['halt', 'settle', 'release']);
  const abandoned = lines.filter((l) => l.msg.startsWith('stop: a step outlived its deadline'));
  expect(abandoned.map((l) => [l.step, l.group])).toEqual([
    ['last commit', 'g.stage'],
    ['leave the group', 'g.stage'],
  ]);
});

test('a failed disconnect is logged, not thrown', async () => {
  const { lines, logger } = capture();
  const stage = new Stage({ disconnect: async () => Promise.reject(new Error('coordinator gone')) }, logger);
  await stage.start();
  await expect(stage.stop()).resolves.toBeUndefined();
  expect(lines.map((l) => l.msg)).toEqual(['consumer disconnect failed']);
});

test('a crash for good fails the stage once: logged, failed() resolves, health names the group', async () => {
  const { lines, logger } = capture();
  const stage = new Stage({ disconnect: async () => undefined }, logger);
  await stage.start();
  const w = liveness({ ok: false, reason: 'consumer of group g.stage made no progress for 9000 ms' });
  stage.watchWith(w.liveness);
  expect(stage.health()).toEqual({ ok: false, reason: 'consumer of group g.stage made no progress for 9000 ms' });
  const crash = new Error('gone');
  w.crash(crash);
  await expect(stage.failed()).resolves.toBe(crash);
  expect(stage.lifecycle).toBe('FAILED');
  expect(stage.isActive).toBe(false);
  expect(stage.health()).toEqual({ ok: false, reason: 'g.stage: FAILED' });
  expect(lines.map((l) => l.msg)).toEqual(['stage FAILED']);
  await stage.stop();
  expect(stage.lifecycle).toBe('STOPPED');
});

test('a crash while stopping is no failure', async () => {
  const { lines, logger } = capture();
  let leave!: () => void;
  const stage = new Stage({ disconnect: () => new Promise<void>((resolve) => (leave = resolve)) }, logger);
  await stage.start();
  const w = liveness();
  stage.watchWith(w.liveness);
  const stopping = stage.stop();
  w.crash(new Error('gone'));
  await new Promise((resolve) => setImmediate(resolve));
  leave();
  await stopping;
  expect(stage.lifecycle).toBe('STOPPED');
  expect(lines).toEqual([]);
});

test('a start-up that fails lets the consumer go, leaves the stage STOPPED and is thrown; a stop after it does nothing', async () => {
  let disconnects = 0;
  const stage = new Stage({ disconnect: async () => void (disconnects += 1) });
  const refused = new Error('broker away');
  stage.startUp = async () => Promise.reject(refused);
  await expect(stage.start()).rejects.toBe(refused);
  expect([stage.lifecycle, disconnects]).toEqual(['STOPPED', 1]);
  await stage.stop();
  expect([disconnects, stage.steps]).toEqual([1, []]);
});

test('the timers a stage runs stop with it; a second start does nothing', async () => {
  const stage = new Stage({ disconnect: async () => undefined });
  await stage.start();
  await stage.start();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await stage.stop();
  const ticks = stage.ticks;
  expect(ticks).toBeGreaterThan(0);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(stage.ticks).toBe(ticks);
});
