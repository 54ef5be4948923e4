/**
 * The read-only classifier behind `replay --dry-run` and the already-done / stale split of a
 * replay: it must agree with the expiry transaction's own plan (core/expiry-plan.ts) on what
 * transitions, and tell "done for this due time" from "no longer expirable".
 */
import fc from 'fast-check';
import type { EntityType } from '../../../src/core/bucket-entry';
import { planExpiry } from '../../../src/core/expiry-plan';
import { classifyBatch, classifyEntry } from '../../../src/reconcile/replay-classify';
import type { EntryRowState } from '../../../src/reconcile/sql/read-entry-states';

const NOW = 1_000_000;
const entry = { id: '7', expireAtMs: NOW - 500 };
const row = (status: string, expireAtMs = entry.expireAtMs, cancelReason: string | null = null): EntryRowState => ({ status, expireAtMs, cancelReason });

test.each<[EntityType, EntryRowState | undefined, string]>([
  ['coupon', row('ACTIVE'), 'due'],
  ['coupon', row('ACTIVE', NOW - 900), 'due'], // moved earlier: the transaction takes it too
  ['coupon', row('ACTIVE', NOW + 1), 'stale'], // extended past the entry: a newer entry covers it
  ['coupon', row('EXPIRED'), 'done'],
  ['coupon', row('EXPIRED', NOW - 400), 'stale'], // expired, but for another due time
  ['coupon', row('USED'), 'stale'],
  ['coupon', row('LOCKED'), 'stale'],
  ['coupon', undefined, 'stale'],
  ['order', row('UNPAID'), 'due'],
  ['order', row('CANCELLED', entry.expireAtMs, 'TIMEOUT'), 'done'],
  ['order', row('CANCELLED', entry.expireAtMs, 'USER'), 'stale'],
  ['order', row('PAID'), 'stale'],
])('%s %j → %s', (entity, state, verdict) => {
  expect(classifyEntry(entity, entry, state, NOW)).toBe(verdict);
});

test('not yet due by the database clock: notDue (a future bucket, or a clock ahead)', () => {
  const future = { id: '8', expireAtMs: NOW + 5_000 };
  expect(classifyEntry('coupon', future, row('ACTIVE', NOW + 5_000), NOW)).toBe('notDue');
  expect(classifyEntry('order', future, row('UNPAID', NOW + 4_000), NOW)).toBe('notDue');
});

test('a duplicate entry in a batch transitions once: the second counts as done', () => {
  const states = { dbNowMs: NOW, rows: new Map([['7', row('ACTIVE')]]) };
  expect(classifyBatch('coupon', [entry, entry], states)).toEqual({ due: 1, notDue: 0, done: 1, stale: 0 });
});

test('agrees with the transaction plan on what transitions, what waits and what it skips', () => {
  const statuses = ['ACTIVE', 'EXPIRED', 'USED', 'LOCKED'];
  const arb = fc.array(
    fc.record({ id: fc.integer({ min: 1, max: 8 }).map(String), expireAtMs: fc.integer({ min: NOW - 3, max: NOW + 3 }), status: fc.constantFrom(...statuses), rowAt: fc.integer({ min: NOW - 3, max: NOW + 3 }), exists: fc.boolean() }),
    { maxLength: 12 },
  );
  fc.assert(
    fc.property(arb, (cases) => {
      const rows = new Map<string, EntryRowState>();
      for (const c of cases) if (c.exists && !rows.has(c.id)) rows.set(c.id, row(c.status, c.rowAt));
      const entries = cases.map((c) => ({ id: c.id, expireAtMs: c.expireAtMs }));
      const counts = classifyBatch('coupon', entries, { dbNowMs: NOW, rows });
      const locked = [...rows].filter(([, r]) => r.status === 'ACTIVE').map(([id, r]) => ({ id, status: r.status, expireAtMs: r.expireAtMs }));
      const plan = planExpiry(entries, locked, 'ACTIVE', NOW);
      expect(counts.due).toBe(plan.due.length);
      expect(counts.notDue).toBe(plan.notYetDue.length);
      expect(counts.done + counts.stale).toBe(plan.stale.length);
    }),
  );
});
