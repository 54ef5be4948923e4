import { CdcInvalidError, TimebucketError } from '../../../src/core/errors';
import type { RetryPolicy } from '../../../src/runtime/retry-policy';
import { createLogger } from '../../../src/ops/logger';
import { retry } from '../../../src/runtime/retry';

const policy: RetryPolicy = { backoff: { baseMs: 100, maxMs: 400 }, deterministicAttempts: 3 };
const retriable = () => new TimebucketError('REGISTRY_UNAVAILABLE', 'registry away', { retriable: true });
const logger = createLogger('silent');

/** Work that fails with each of `failures` in turn, then returns the attempt it succeeded on. */
function failing(failures: unknown[]) {
  const attempts: number[] = [];
  const work = async (attempt: number) => {
    attempts.push(attempt);
    if (attempt <= failures.length) throw failures[attempt - 1];
    return attempt;
  };
  return { work, attempts };
}

function harness(extra: Partial<Parameters<typeof retry>[1]> = {}) {
  const waits: number[] = [];
  return { waits, opts: { policy, what: 'the work', logger, sleep: async (ms: number) => void waits.push(ms), random: () => 1, ...extra } };
}

test('retriable failures are retried for as long as they last, with the backoff between attempts', async () => {
  const { work, attempts } = failing(Array.from({ length: 6 }, retriable));
  const { waits, opts } = harness();
  await expect(retry(work, opts)).resolves.toBe(7);
  expect(attempts).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(waits).toEqual([100, 200, 400, 400, 400, 400]);
});

test('a deterministic failure is tried deterministicAttempts times in all, then thrown unchanged', async () => {
  const bad = new CdcInvalidError('bad');
  const { work, attempts } = failing([bad, bad, bad, bad]);
  const { waits, opts } = harness();
  await expect(retry(work, opts)).rejects.toBe(bad);
  expect(attempts).toEqual([1, 2, 3]);
  expect(waits).toHaveLength(2);
});

test('retriableAttempts bounds retriable failures (a command that must end)', async () => {
  const last = retriable();
  const { work, attempts } = failing([retriable(), retriable(), last, retriable()]);
  const { opts } = harness({ policy: { ...policy, retriableAttempts: 3 } });
  await expect(retry(work, opts)).rejects.toBe(last);
  expect(attempts).toEqual([1, 2, 3]);
});

test('keepGoing false ends the retries with the last failure, without a wait', async () => {
  const first = retriable();
  const { work, attempts } = failing([first, retriable()]);
  const { waits, opts } = harness({ keepGoing: () => false });
  await expect(retry(work, opts)).rejects.toBe(first);
  expect(attempts).toEqual([1]);
  expect(waits).toEqual([]);
});

test('beforeWait runs before each wait with the failure and its kind; what it throws ends the retries', async () => {
  const seen: Array<[number, string]> = [];
  const rebalance = new Error('rebalance in progress');
  const { work, attempts } = failing([retriable(), new CdcInvalidError('bad'), retriable()]);
  const { opts } = harness({
    beforeWait: (_err, attempt, kind) => {
      seen.push([attempt, kind]);
      if (attempt === 2) throw rebalance;
    },
  });
  await expect(retry(work, opts)).rejects.toBe(rebalance);
  expect(seen).toEqual([
    [1, 'retriable'],
    [2, 'deterministic'],
  ]);
  expect(attempts).toEqual([1, 2]);
});

test("log replaces the runner's warning with the part's own line for each failed attempt, before its wait", async () => {
  const { work } = failing([retriable(), new CdcInvalidError('bad', {})]);
  const lines: unknown[][] = [];
  const { waits, opts } = harness({ log: (err, attempt, kind, waitMs) => lines.push([(err as Error).message, attempt, kind, waitMs, waits.length]) });
  await expect(retry(work, opts)).resolves.toBe(3);
  expect(lines).toEqual([
    ['registry away', 1, 'retriable', 100, 0],
    ['bad', 2, 'deterministic', 200, 1],
  ]);
});
