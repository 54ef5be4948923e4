import type { EntityType } from '../../../src/core/bucket-entry';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { CompensationScanner, ScannerOptions } from '../../../src/reconcile/compensation-scanner';
import type { ScanPage } from '../../../src/reconcile/sql/claim-scan-page';
import { createLogger } from '../../../src/ops/logger';
import { waitFor } from '../../support/wait-for';

const page = (ids: string[], o: Partial<ScanPage> = {}): ScanPage => ({ rows: ids.map((id) => ({ id, expireAtMs: 1 })), inPass: true, passComplete: false, ...o });
const outcome = (entries: readonly ScheduledEntry[], caught: number): BatchOutcome => ({
  transitioned: entries.slice(0, caught).map((e) => ({ id: e.id, dueAtMs: e.expireAtMs })),
  notYetDue: [],
  stale: entries.slice(caught),
  dbNowMs: 2,
});

function harness(pages: Array<ScanPage | Error>, o: Partial<ScannerOptions> = {}) {
  const claims: number[] = [];
  const batches: Array<{ entity: EntityType; ids: string[] }> = [];
  const caught: number[] = [];
  const passes: number[] = [];
  let next = 0;
  const scanner = new CompensationScanner({
    entities: ['coupon'],
    claimPage: async () => {
      claims.push(Date.now());
      const p = pages[Math.min(next++, pages.length - 1)]!;
      if (p instanceof Error) throw p;
      return p;
    },
    expireBatch: async (entity, entries) => {
      batches.push({ entity, ids: entries.map((e) => e.id) });
      return outcome(entries, 1); // the stream did the others meanwhile
    },
    intervalMs: 60_000,
    maxPagesPerSecond: 1_000,
    backoff: { baseMs: 10, maxMs: 20 },
    clock: { now: () => Date.now() },
    logger: createLogger('silent'),
    observer: { caught: (_e, out) => void caught.push(out.transitioned.length), passComplete: (_e, at) => void passes.push(at) },
    ...o,
  });
  return { scanner, claims, batches, caught, passes };
}

test('pages through a pass, transitions each page, counts only what it caught, then waits for the next pass', async () => {
  const h = harness([page(['1', '2']), page(['3', '4']), page(['5'], { passComplete: true }), page([], { inPass: false })]);
  h.scanner.start();
  await waitFor('the pass to complete', () => (h.passes.length === 1 ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  expect(h.batches).toEqual([
    { entity: 'coupon', ids: ['1', '2'] },
    { entity: 'coupon', ids: ['3', '4'] },
    { entity: 'coupon', ids: ['5'] },
  ]);
  expect(h.caught).toEqual([1, 1, 1]);
  await new Promise((r) => setTimeout(r, 100));
  expect(h.claims).toHaveLength(3); // waiting out intervalMs before claiming again
  await h.scanner.stop(); // wakes the wait
  expect(h.scanner.lifecycle).toBe('STOPPED');
});

test('pages are claimed no faster than maxPagesPerSecond', async () => {
  const h = harness([page(['1'])], { maxPagesPerSecond: 20 });
  h.scanner.start();
  await waitFor('six claims', () => (h.claims.length >= 6 ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  await h.scanner.stop();
  const span = h.claims[5]! - h.claims[0]!;
  expect(span).toBeGreaterThanOrEqual(5 * 50 - 10);
});

test('a failing claim backs off and is tried again; the loop never dies', async () => {
  const h = harness([new Error('db down'), new Error('db down'), page(['1'], { passComplete: true })]);
  h.scanner.start();
  await waitFor('the page after the failures', () => (h.batches.length === 1 ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  expect(h.claims).toHaveLength(3);
  await h.scanner.stop();
});
