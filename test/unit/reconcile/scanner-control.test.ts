/** The compensation scanner under the operator's switches: pause (scanner or entity) and throttle. */
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { createTransitionGate } from '../../../src/control/gate';
import { createLogger } from '../../../src/ops/logger';
import { CompensationScanner } from '../../../src/reconcile/compensation-scanner';
import { type ScanPage } from '../../../src/reconcile/sql/claim-scan-page';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { fakeSwitches } from '../../support/fake-switches';
import { defaults, twoCouponTransitions } from './catalogues';

const T0 = 1_700_000_000_000;
const clock = { now: () => Date.now() };

/** Every claim returns a full page of `pageRows` fresh ids (a pass that never ends). */
function harness(o: { entities?: string[]; pageRows?: number; catalogue?: typeof defaults } = {}) {
  const switches = fakeSwitches();
  const claims: Array<{ entity: string; at: number }> = [];
  const batches: Array<{ entity: string; ids: string[]; at: number }> = [];
  let seq = 0;
  const entities = o.entities ?? ['coupon'];
  const scanner = new CompensationScanner({
    cursors: scanCursorsOf(o.catalogue ?? defaults).filter((c) => entities.includes(c.transition.entity)),
    claimPage: async (cursor): Promise<ScanPage> => {
      claims.push({ entity: cursor.transition.entity, at: Date.now() });
      return { rows: Array.from({ length: o.pageRows ?? 2 }, () => ({ id: String(++seq), expireAtMs: 1 })), inPass: true, passComplete: false };
    },
    expireBatch: async (cursor, entries: readonly ScheduledEntry[]): Promise<BatchOutcome> => {
      batches.push({ entity: cursor.transition.entity, ids: entries.map((e) => e.id), at: Date.now() });
      return { transitioned: [], notYetDue: [], stale: [...entries], dbNowMs: Date.now() };
    },
    intervalMs: 60_000,
    maxPagesPerSecond: 10,
    backoff: { baseMs: 10, maxMs: 20 },
    clock,
    logger: createLogger('silent'),
    gate: createTransitionGate(switches.reader, clock),
  });
  return { scanner, switches, claims, batches };
}

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

test('while the scanner is paused it claims no page (the shared cursor stays); resume restarts it at once', async () => {
  const h = harness();
  h.switches.pause('scanner');
  h.scanner.start();
  await jest.advanceTimersByTimeAsync(5 * 60_000);
  expect(h.claims).toEqual([]);
  h.switches.resume('scanner');
  await jest.advanceTimersByTimeAsync(0);
  expect(h.claims).toEqual([{ entity: 'coupon', at: T0 + 5 * 60_000 }]);
  await h.scanner.stop();
});

test('a paused entity is left alone while the other is scanned', async () => {
  const h = harness({ entities: ['order', 'coupon'] });
  h.switches.pause('coupon');
  h.scanner.start();
  await jest.advanceTimersByTimeAsync(1_000);
  expect(h.claims.filter((c) => c.entity === 'coupon')).toEqual([]);
  expect(h.claims.filter((c) => c.entity === 'order').length).toBeGreaterThan(5);
  expect(h.batches.every((b) => b.entity === 'order')).toBe(true);
  await h.scanner.stop();
});

test('a throttled page goes in slices of the tokens available', async () => {
  const h = harness({ pageRows: 10 });
  h.switches.throttle('coupon', 4);
  h.scanner.start();
  await jest.advanceTimersByTimeAsync(1_500);
  expect(h.batches.slice(0, 3).map((b) => [b.ids.length, b.at - T0])).toEqual([
    [4, 0],
    [4, 1_000],
    [2, 1_500],
  ]);
  await h.scanner.stop();
});

test('a pause mid-page leaves the rest of the page (its rows stay overdue for the next pass) and claims nothing more', async () => {
  const h = harness({ pageRows: 3 });
  h.switches.throttle('coupon', 1);
  h.scanner.start();
  await jest.advanceTimersByTimeAsync(0);
  expect(h.batches.map((b) => b.ids)).toEqual([['1']]);
  h.switches.pause('coupon');
  await jest.advanceTimersByTimeAsync(10_000);
  expect(h.batches.map((b) => b.ids)).toEqual([['1']]);
  expect(h.claims).toHaveLength(1);
  await h.scanner.stop();
  expect(h.scanner.lifecycle).toBe('STOPPED');
});

test('stop() wakes a scanner waiting out a pause or a throttle', async () => {
  const h = harness({ entities: ['order', 'coupon'], pageRows: 50 });
  h.switches.pause('order');
  h.switches.throttle('coupon', 0.01);
  h.scanner.start();
  await jest.advanceTimersByTimeAsync(0);
  const stopped = h.scanner.stop();
  await jest.advanceTimersByTimeAsync(0);
  await stopped;
  expect(h.scanner.lifecycle).toBe('STOPPED');
});

test("an entity's pause and throttle hold every one of its transitions' cursors", async () => {
  const h = harness({ catalogue: twoCouponTransitions, pageRows: 10 });
  h.switches.throttle('coupon', 4);
  h.scanner.start();
  await jest.advanceTimersByTimeAsync(999);
  // One bucket of 4 tokens a second for the entity, shared by its two loops.
  expect(h.batches.reduce((n, b) => n + b.ids.length, 0)).toBe(4);
  h.switches.pause('coupon');
  const before = h.claims.length;
  await jest.advanceTimersByTimeAsync(10_000);
  expect(h.claims.length).toBe(before);
  await h.scanner.stop();
});
