import { createBreaker, BreakerState } from '../../../src/runtime/breaker';
import { classifyFailure } from '../../../src/runtime/retry-policy';
import { createLogger } from '../../../src/ops/logger';
import { TimebucketError } from '../../../src/core/errors';

const down = () => Object.assign(new Error('db down'), { code: 'ECONNREFUSED' });

test('opens after retriable failures, fails fast with a retriable error, probes half-open, closes on success', async () => {
  let healthy = false;
  let calls = 0;
  const states: BreakerState[] = [];
  const breaker = createBreaker(
    async (x: number) => {
      calls += 1;
      if (!healthy) throw down();
      return x * 2;
    },
    { name: 'expiry', volumeThreshold: 3, resetTimeoutMs: 200, logger: createLogger('silent'), onStateChange: (_n, s) => states.push(s) },
  );
  for (let i = 0; i < 3; i += 1) await expect(breaker.fire(1)).rejects.toThrow('db down');
  expect(breaker.state()).toBe('open');
  const fast = await breaker.fire(1).catch((err: unknown) => err);
  expect(calls).toBe(3); // not called while open
  expect(classifyFailure(fast)).toBe('retriable');
  healthy = true;
  await new Promise((r) => setTimeout(r, 250));
  expect(breaker.state()).toBe('half-open');
  await expect(breaker.fire(21)).resolves.toBe(42);
  expect(breaker.state()).toBe('closed');
  expect(states).toEqual(['open', 'half-open', 'closed']);
  breaker.shutdown();
});

test('one statement past its deadline opens it at once, far below the volume a window needs; a half-open probe that hangs again reopens it', async () => {
  const states: BreakerState[] = [];
  const unanswered = () => new TimebucketError('STATEMENT_DEADLINE', 'statement still unanswered', { retriable: true });
  let answer = false;
  const breaker = createBreaker(
    async () => {
      if (!answer) throw unanswered();
      return 'ok';
    },
    { name: 'expiry-wallet', volumeThreshold: 50, resetTimeoutMs: 100, logger: createLogger('silent'), onStateChange: (_n, s) => states.push(s) },
  );
  await expect(breaker.fire()).rejects.toMatchObject({ code: 'STATEMENT_DEADLINE' });
  expect(breaker.state()).toBe('open');
  await new Promise((r) => setTimeout(r, 150));
  await expect(breaker.fire()).rejects.toMatchObject({ code: 'STATEMENT_DEADLINE' });
  expect(breaker.state()).toBe('open');
  answer = true;
  await new Promise((r) => setTimeout(r, 150));
  await expect(breaker.fire()).resolves.toBe('ok');
  expect(states).toEqual(['open', 'half-open', 'open', 'half-open', 'closed']);
  breaker.shutdown();
});

test('a connection attempt that timed out (a server that does not answer, with no idle connection to hang on) opens it at once too', async () => {
  const connectTimedOut = Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT', fatal: true });
  const breaker = createBreaker(
    async () => {
      throw connectTimedOut;
    },
    { name: 'expiry-wallet', volumeThreshold: 50, logger: createLogger('silent') },
  );
  await expect(breaker.fire()).rejects.toBe(connectTimedOut);
  expect(breaker.state()).toBe('open');
  breaker.shutdown();
});

test('a few ordinary retriable failures below the volume threshold leave it closed', async () => {
  const breaker = createBreaker(
    async () => {
      throw down();
    },
    { name: 'expiry', volumeThreshold: 5, logger: createLogger('silent') },
  );
  for (let i = 0; i < 4; i += 1) await expect(breaker.fire()).rejects.toThrow('db down');
  expect(breaker.state()).toBe('closed');
  breaker.shutdown();
});

test('deterministic failures (bad input) never open it', async () => {
  const breaker = createBreaker(
    async () => {
      throw new TypeError('bad row');
    },
    { name: 'expiry', volumeThreshold: 2, logger: createLogger('silent') },
  );
  for (let i = 0; i < 10; i += 1) await expect(breaker.fire()).rejects.toThrow('bad row');
  expect(breaker.state()).toBe('closed');
  breaker.shutdown();
});

test('a transition waiting for its schema id never opens it: the database answered', async () => {
  const breaker = createBreaker(
    async () => {
      throw new TimebucketError('SCHEMA_ID_MISSING', 'no schema id for COUPON_EXPIRED yet', { retriable: true });
    },
    { name: 'expiry', volumeThreshold: 2, logger: createLogger('silent') },
  );
  for (let i = 0; i < 10; i += 1) await expect(breaker.fire()).rejects.toMatchObject({ code: 'SCHEMA_ID_MISSING' });
  expect(breaker.state()).toBe('closed');
  breaker.shutdown();
});
