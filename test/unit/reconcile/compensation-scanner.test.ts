import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { CompensationScanner, ScannerOptions } from '../../../src/reconcile/compensation-scanner';
import { lastPassOfEntity } from '../../../src/reconcile/start-scanner';
import { type ScanPage } from '../../../src/reconcile/sql/claim-scan-page';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { createLogger } from '../../../src/ops/logger';
import { waitFor } from '../../support/wait-for';
import { defaults, tickets, twoCouponTransitions } from './catalogues';

const page = (ids: string[], o: Partial<ScanPage> = {}): ScanPage => ({
  rows: ids.map((id) => ({ id, expireAtMs: 1 })),
  inPass: true,
  passComplete: false,
  ...o,
});
const outcome = (entries: readonly ScheduledEntry[], caught: number): BatchOutcome => ({
  transitioned: entries.slice(0, caught).map((e) => ({ id: e.id, dueAtMs: e.expireAtMs })),
  notYetDue: [],
  stale: entries.slice(caught),
  dbNowMs: 2,
});

function harness(pages: Array<ScanPage | Error>, o: Partial<ScannerOptions> = {}) {
  const claims: number[] = [];
  const batches: Array<{ transition: string; ids: string[] }> = [];
  const caught: number[] = [];
  const passes: number[] = [];
  let next = 0;
  const scanner = new CompensationScanner({
    cursors: scanCursorsOf(defaults).filter((c) => c.key === 'coupon'),
    claimPage: async () => {
      claims.push(Date.now());
      const p = pages[Math.min(next++, pages.length - 1)]!;
      if (p instanceof Error) throw p;
      return p;
    },
    expireBatch: async (cursor, entries) => {
      batches.push({ transition: cursor.transition.ref, ids: entries.map((e) => e.id) });
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
    { transition: 'coupon.expired', ids: ['1', '2'] },
    { transition: 'coupon.expired', ids: ['3', '4'] },
    { transition: 'coupon.expired', ids: ['5'] },
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

const dbDown = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const noTable = () => Object.assign(new Error("Table 'scanner_cursors' doesn't exist"), { errno: 1146 });

test('a claim failing while the database is away is counted, backed off and tried again for as long as it lasts', async () => {
  const failed: unknown[] = [];
  const h = harness([dbDown(), dbDown(), dbDown(), dbDown(), page(['1'], { passComplete: true })], {
    observer: { failed: (_c, err) => void failed.push(err) },
  });
  h.scanner.start();
  await waitFor('the page after the failures', () => (h.batches.length === 1 ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  expect(h.claims).toHaveLength(5);
  expect(failed).toHaveLength(4);
  expect(h.scanner.health()).toEqual({ ok: true });
  await h.scanner.stop();
  expect(h.scanner.lifecycle).toBe('STOPPED');
});

test('a claim that can never work turns the scanner FAILED after three tries in a row: named in health, no more claims', async () => {
  const h = harness([noTable()]);
  h.scanner.start();
  await expect(h.scanner.failed()).resolves.toMatchObject({ errno: 1146 });
  expect(h.scanner.lifecycle).toBe('FAILED');
  expect(h.claims).toHaveLength(3);
  expect(h.scanner.health()).toEqual({ ok: false, reason: "scanner coupon FAILED: Table 'scanner_cursors' doesn't exist" });
  await h.scanner.stop();
  expect(h.scanner.lifecycle).toBe('FAILED');
  expect(h.claims).toHaveLength(3);
});

test("cursors: one per transition, keyed by the entity for its first (today's rows) and by the ref otherwise; one per from-value", () => {
  expect(scanCursorsOf(defaults).map((c) => [c.key, c.transition.ref, c.from])).toEqual([
    ['coupon', 'coupon.expired', 'ACTIVE'],
    ['order', 'order.cancelled', 'UNPAID'],
  ]);
  expect(scanCursorsOf(twoCouponTransitions).map((c) => [c.key, c.transition.ref, c.from])).toEqual([
    ['coupon', 'coupon.expired', 'ACTIVE'],
    ['coupon.unlocked', 'coupon.unlocked', 'LOCKED'],
  ]);
  // An integer status with two from-values: each value its own index range, its own cursor.
  expect(scanCursorsOf(tickets).map((c) => [c.key, c.from])).toEqual([
    ['ticket', 1],
    ['ticket#1', 2],
  ]);
});

test('two transitions of one entity: a loop and a cursor each, each page run as its own transition', async () => {
  const claimed: string[] = [];
  const batches: Array<[string, string[]]> = [];
  const pages = new Map<string, ScanPage[]>([
    ['coupon', [page(['1', '2'], { passComplete: true })]],
    ['coupon.unlocked', [page(['3']), page(['4'], { passComplete: true })]],
  ]);
  const scanner = new CompensationScanner({
    cursors: scanCursorsOf(twoCouponTransitions),
    claimPage: async (cursor) => {
      claimed.push(cursor.key);
      return pages.get(cursor.key)!.shift() ?? page([], { inPass: false });
    },
    expireBatch: async (cursor, entries) => {
      batches.push([cursor.transition.ref, entries.map((e) => e.id)]);
      return outcome(entries, entries.length);
    },
    intervalMs: 60_000,
    maxPagesPerSecond: 1_000,
    backoff: { baseMs: 10, maxMs: 20 },
    clock: { now: () => Date.now() },
    logger: createLogger('silent'),
  });
  scanner.start();
  await waitFor('both cursors through their pass', () => (batches.length === 3 ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  await scanner.stop();
  expect(batches.filter(([ref]) => ref === 'coupon.expired')).toEqual([['coupon.expired', ['1', '2']]]);
  expect(batches.filter(([ref]) => ref === 'coupon.unlocked')).toEqual([
    ['coupon.unlocked', ['3']],
    ['coupon.unlocked', ['4']],
  ]);
  expect(claimed.filter((k) => k === 'coupon')).toHaveLength(1);
  expect(claimed.filter((k) => k === 'coupon.unlocked')).toHaveLength(2);
});

test("an entity's last-pass time is the oldest of its cursors' last passes, once each has completed one", () => {
  const [expired, unlocked] = scanCursorsOf(twoCouponTransitions);
  const lastPass = lastPassOfEntity(scanCursorsOf(twoCouponTransitions));
  expect(lastPass(expired!, 1_000)).toBeUndefined(); // unlocked has not completed a pass yet
  expect(lastPass(unlocked!, 1_500)).toBe(1_000);
  expect(lastPass(expired!, 2_000)).toBe(1_500);
  // Another entity's cursors do not hold it back.
  const [coupon, order] = scanCursorsOf(defaults);
  const single = lastPassOfEntity(scanCursorsOf(defaults));
  expect(single(coupon!, 5)).toBe(5);
  expect(single(order!, 7)).toBe(7);
});

test('a cursor whose transition is held for its first pass claims no page: no pass of it completes', async () => {
  const held = jest.fn(() => true);
  const h = harness([page(['1'], { passComplete: true })], { held });
  await h.scanner.start();
  await waitFor('the held cursor to be looked at', () => (held.mock.calls.length > 0 ? true : undefined), { timeoutMs: 2_000, intervalMs: 5 });
  await h.scanner.stop();
  expect({ claims: h.claims.length, batches: h.batches, passes: h.passes }).toEqual({ claims: 0, batches: [], passes: [] });
});
