import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import { ConsumerCrashedError } from '../../../src/core/errors';
import { watchConsumer } from '../../../src/kafka/consumer-watch';

const events = { FETCH_START: 'consumer.fetch_start', GROUP_JOIN: 'consumer.group_join', HEARTBEAT: 'consumer.heartbeat', CRASH: 'consumer.crash' };

/** A kafkajs consumer as far as the watch sees it: `on` returning a remover, and events. */
function fakeConsumer() {
  const emitter = new EventEmitter();
  const consumer = {
    events,
    on: (event: string, listener: (e: unknown) => void) => {
      emitter.on(event, listener);
      return () => emitter.off(event, listener);
    },
  } as unknown as Consumer;
  return { consumer, emit: (event: string, payload: unknown = {}) => emitter.emit(event, { payload }) };
}

let now = 0;
const clock = { now: () => now };

beforeEach(() => {
  now = 1_000_000;
  jest.useFakeTimers();
});
afterEach(() => jest.useRealTimers());

test('healthy while the loop fetches; unhealthy, with the reason, once it stops for stallMs', () => {
  const { consumer, emit } = fakeConsumer();
  const watch = watchConsumer(consumer, { group: 'g.expirer', clock, stallMs: 5_000 });
  now += 4_000;
  emit(events.FETCH_START);
  now += 4_000;
  expect(watch.health()).toEqual({ ok: true });
  now += 1_001;
  expect(watch.health()).toEqual({ ok: false, reason: 'consumer of group g.expirer made no progress for 5001 ms' });
  emit(events.HEARTBEAT);
  expect(watch.health()).toEqual({ ok: true });
  watch.stop();
});

test('a crash kafkajs restarts is not a failure; one it does not restart is', async () => {
  const { consumer, emit } = fakeConsumer();
  const watch = watchConsumer(consumer, { group: 'g.expirer', clock, stallMs: 5_000 });
  let failure: unknown;
  void watch.failed.then((err) => (failure = err));
  emit(events.CRASH, { error: new Error('retriable'), groupId: 'g.expirer', restart: true });
  await Promise.resolve();
  expect(failure).toBeUndefined();
  expect(watch.health().ok).toBe(true);
  const cause = new Error('not retriable');
  emit(events.CRASH, { error: cause, groupId: 'g.expirer', restart: false });
  await Promise.resolve();
  expect(failure).toBeInstanceOf(ConsumerCrashedError);
  expect((failure as ConsumerCrashedError).cause).toBe(cause);
  expect(watch.health()).toEqual({ ok: false, reason: 'consumer of group g.expirer crashed and will not restart' });
  watch.stop();
});

test('stuck for twice stallMs counts as a crash', async () => {
  const { consumer } = fakeConsumer();
  const watch = watchConsumer(consumer, { group: 'g', clock, stallMs: 2_000 });
  let failure: unknown;
  void watch.failed.then((err) => (failure = err));
  now += 3_999;
  await jest.advanceTimersByTimeAsync(1_000);
  expect(failure).toBeUndefined();
  now += 2;
  await jest.advanceTimersByTimeAsync(1_000);
  expect(failure).toBeInstanceOf(ConsumerCrashedError);
  watch.stop();
});

test('stop() removes every listener and the timer', async () => {
  const { consumer, emit } = fakeConsumer();
  const watch = watchConsumer(consumer, { group: 'g', clock, stallMs: 1_000 });
  watch.stop();
  let failure: unknown;
  void watch.failed.then((err) => (failure = err));
  emit(events.CRASH, { error: new Error('x'), restart: false });
  now += 10_000;
  await jest.advanceTimersByTimeAsync(5_000);
  expect(failure).toBeUndefined();
});
