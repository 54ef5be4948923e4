import { retryInBackground } from '../../../src/runtime/retry-in-background';
import { createLogger } from '../../../src/ops/logger';

const logger = createLogger('silent');
const backoff = { baseMs: 1, maxMs: 4 };

test('retries every failure, retriable or not, until the work succeeds; each failure is counted', async () => {
  const outcomes: Array<Error | 'ok'> = [new Error('refused: deterministic'), Object.assign(new Error('away'), { code: 'ECONNREFUSED' }), 'ok'];
  let calls = 0;
  let failures = 0;
  const background = retryInBackground(
    async () => {
      const next = outcomes[calls++];
      if (next !== 'ok') throw next;
    },
    { what: 'test work', backoff, logger, onFailure: () => (failures += 1) },
  );
  await expect(background.done).resolves.toBe(true);
  expect([calls, failures]).toEqual([3, 2]);
  await background.stop();
  expect(calls).toBe(3);
});

test('stop() ends a long wait at once: no further attempt, done is false', async () => {
  let calls = 0;
  const background = retryInBackground(
    async () => {
      calls += 1;
      throw new Error('never');
    },
    { what: 'test work', backoff: { baseMs: 60_000, maxMs: 60_000 }, logger },
  );
  const t0 = Date.now();
  await background.stop();
  expect(Date.now() - t0).toBeLessThan(1_000);
  await expect(background.done).resolves.toBe(false);
  // The wait before the first retry is jittered: at most one attempt, if it drew almost nothing.
  expect(calls).toBeLessThanOrEqual(1);
});
