/**
 * The read-only classifier behind `replay --dry-run` and the already-done / stale split of a
 * replay: it must agree with the expiry transaction's own plan (core/expiry-plan.ts) on what
 * transitions, and tell "done for this due time" from "no longer in a from-state".
 */
import fc from 'fast-check';
import type { StatusValue, Transition } from '../../../src/core/entity-catalogue';
import { planExpiry } from '../../../src/core/expiry-plan';
import { classifyBatch, classifyEntry } from '../../../src/replay/replay-classify';
import { statesQuery, type EntryRowState } from '../../../src/replay/sql/read-entry-states';
import { couponExpired, orderCancelled, ticketLapsed, tickets } from '../reconcile/catalogues';

const NOW = 1_000_000;
const entry = { id: '7', expireAtMs: NOW - 500 };
const row = (status: StatusValue, expireAtMs: number | null = entry.expireAtMs, holds: Record<string, boolean> = {}): EntryRowState => ({
  status,
  expireAtMs,
  holds,
});

test.each<[Transition, EntryRowState | undefined, string]>([
  [couponExpired, row('ACTIVE'), 'due'],
  [couponExpired, row('ACTIVE', NOW - 900), 'due'], // moved earlier: the transaction takes it too
  [couponExpired, row('ACTIVE', NOW + 1), 'stale'], // extended past the entry: a newer entry covers it
  [couponExpired, row('ACTIVE', null), 'stale'], // its deadline removed
  [couponExpired, row('EXPIRED'), 'done'], // no value assignment to check: the state and time say it
  [couponExpired, row('EXPIRED', NOW - 400), 'stale'], // expired, but for another due time
  [couponExpired, row('USED'), 'stale'],
  [couponExpired, row('LOCKED'), 'stale'],
  [couponExpired, undefined, 'stale'],
  [orderCancelled, row('UNPAID'), 'due'],
  [orderCancelled, row('CANCELLED', entry.expireAtMs, { cancel_reason: true }), 'done'],
  [orderCancelled, row('CANCELLED', entry.expireAtMs, { cancel_reason: false }), 'stale'], // cancelled by the application (reason USER)
  [orderCancelled, row('PAID'), 'stale'],
])('%# %j → %s', (transition, state, verdict) => {
  expect(classifyEntry(transition, entry, state, NOW)).toBe(verdict);
});

test("'done' needs every value assignment of the transition to hold, and only those", () => {
  // ticket.lapsed sets reason = 'LAPSED' (a value) and lapsed_at = now (not a value: not checked).
  expect(classifyEntry(ticketLapsed, entry, row(3, entry.expireAtMs, { reason: true }), NOW)).toBe('done');
  expect(classifyEntry(ticketLapsed, entry, row(3, entry.expireAtMs, { reason: false }), NOW)).toBe('stale');
  expect(classifyEntry(ticketLapsed, entry, row(3, entry.expireAtMs, {}), NOW)).toBe('stale');
});

test('an integer status: any of its from-values is live, compared as numbers', () => {
  expect(classifyEntry(ticketLapsed, entry, row(1), NOW)).toBe('due');
  expect(classifyEntry(ticketLapsed, entry, row(2), NOW)).toBe('due');
  expect(classifyEntry(ticketLapsed, entry, row(0), NOW)).toBe('stale');
  expect(classifyEntry(ticketLapsed, entry, row('1'), NOW)).toBe('stale'); // the reader types it; a string is not the value
});

test('the states query reads the status, the due column and whether each value assignment holds (NULL-safe)', () => {
  expect(statesQuery(tickets.entities[0]!, ticketLapsed, tickets.entities[0]!.locations[0]!)).toEqual({
    sql: 'SELECT `ticket_id` AS id, `state` AS status, `deadline_ms` AS due, (`reason` <=> ?) AS holds_0 FROM `tickets` FORCE INDEX (PRIMARY) WHERE `ticket_id` IN (?)',
    values: [{ kind: 'value', column: 'reason', value: 'LAPSED' }],
  });
});

test('not yet due by the database clock: notDue (a future bucket, or a clock ahead)', () => {
  const future = { id: '8', expireAtMs: NOW + 5_000 };
  expect(classifyEntry(couponExpired, future, row('ACTIVE', NOW + 5_000), NOW)).toBe('notDue');
  expect(classifyEntry(orderCancelled, future, row('UNPAID', NOW + 4_000), NOW)).toBe('notDue');
});

test('a duplicate entry in a batch transitions once: the second counts as done', () => {
  const states = { dbNowMs: NOW, rows: new Map([['7', row('ACTIVE')]]) };
  expect(classifyBatch(couponExpired, [entry, entry], states)).toEqual({ due: 1, notDue: 0, done: 1, stale: 0 });
});

test('a transition that clears its own due column is done by its state and assignments alone', () => {
  // The seed's lock timeout: 已锁定 → 待使用, setting lock_expire_time (its due column) to NULL.
  const unlocked = {
    ...couponExpired,
    name: 'unlocked',
    from: ['LOCKED'],
    to: 'ACTIVE',
    due: { column: 'lock_until', kind: 'datetime' as const },
    set: [{ kind: 'value' as const, column: 'lock_until', value: null }],
  };
  expect(classifyEntry(unlocked, entry, row('ACTIVE', null, { lock_until: true }), NOW)).toBe('done');
  expect(classifyEntry(unlocked, entry, row('ACTIVE', null, { lock_until: false }), NOW)).toBe('stale');
  expect(classifyEntry(unlocked, entry, row('LOCKED', null), NOW)).toBe('stale'); // locked again, no deadline
  expect(classifyEntry(couponExpired, entry, row('EXPIRED', null), NOW)).toBe('stale'); // a transition that keeps its due column needs it
});

test('agrees with the transaction plan on what transitions, what waits and what it skips', () => {
  const statuses = [0, 1, 2, 3];
  const arb = fc.array(
    fc.record({
      id: fc.integer({ min: 1, max: 8 }).map(String),
      expireAtMs: fc.integer({ min: NOW - 3, max: NOW + 3 }),
      status: fc.constantFrom(...statuses),
      rowAt: fc.integer({ min: NOW - 3, max: NOW + 3 }),
      exists: fc.boolean(),
    }),
    { maxLength: 12 },
  );
  fc.assert(
    fc.property(arb, (cases) => {
      const rows = new Map<string, EntryRowState>();
      for (const c of cases) if (c.exists && !rows.has(c.id)) rows.set(c.id, row(c.status, c.rowAt));
      const entries = cases.map((c) => ({ id: c.id, expireAtMs: c.expireAtMs }));
      const counts = classifyBatch(ticketLapsed, entries, { dbNowMs: NOW, rows });
      // What the transaction's lock read returns: the rows in a from-state.
      const locked = [...rows].filter(([, r]) => ticketLapsed.from.includes(r.status)).map(([id, r]) => ({ id, status: r.status, expireAtMs: r.expireAtMs! }));
      const plan = planExpiry(entries, locked, NOW);
      expect(counts.due).toBe(plan.due.length);
      expect(counts.notDue).toBe(plan.notYetDue.length);
      expect(counts.done + counts.stale).toBe(plan.stale.length);
    }),
  );
});
