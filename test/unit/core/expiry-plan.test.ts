import { planExpiry, type LockedRow, type ScheduledEntry } from '../../../src/core/expiry-plan';

const NOW = 1_700_000_000_000;
const entry = (id: string, expireAtMs: number): ScheduledEntry => ({ id, expireAtMs });
const row = (id: string, status: string | number, expireAtMs: number): LockedRow => ({ id, status, expireAtMs });

describe('planExpiry', () => {
  test('expirable row whose time has come by the DB clock → due (the row, not the entry)', () => {
    const r = row('1', 'ACTIVE', NOW - 10);
    const plan = planExpiry([entry('1', NOW - 10)], [r], NOW);
    expect(plan).toEqual({ due: [r], notYetDue: [], stale: [] });
  });

  test('expire_time exactly at the DB now → due', () => {
    const plan = planExpiry([entry('1', NOW)], [row('1', 'UNPAID', NOW)], NOW);
    expect(plan.due).toEqual([row('1', 'UNPAID', NOW)]);
    expect(plan.notYetDue).toEqual([]);
  });

  test('not yet due by the DB clock → notYetDue with the DB remaining time (I2)', () => {
    const e = entry('1', NOW + 250);
    const plan = planExpiry([e], [row('1', 'ACTIVE', NOW + 250)], NOW);
    expect(plan).toEqual({ due: [], notYetDue: [{ entry: e, retryInMs: 250 }], stale: [] });
  });

  test('missing row → stale', () => {
    const e = entry('404', NOW - 1);
    expect(planExpiry([e], [], NOW)).toEqual({ due: [], notYetDue: [], stale: [e] });
  });

  test('a locked row is in a from-state whatever its text: the database compared it (a case-insensitive collation keeps "active")', () => {
    const e = entry('1', NOW - 1);
    const r = row('1', 'active', NOW - 1);
    expect(planExpiry([e], [r], NOW)).toEqual({ due: [r], notYetDue: [], stale: [] });
  });

  test('expire_time pushed later than the entry → stale (a newer entry exists), even if due by then', () => {
    const pushedNotDue = entry('1', NOW - 100);
    const pushedButDue = entry('2', NOW - 100);
    const plan = planExpiry([pushedNotDue, pushedButDue], [row('1', 'ACTIVE', NOW + 60_000), row('2', 'ACTIVE', NOW - 50)], NOW);
    expect(plan).toEqual({ due: [], notYetDue: [], stale: [pushedNotDue, pushedButDue] });
  });

  test('row moved EARLIER than the entry and already due → due', () => {
    const r = row('1', 'ACTIVE', NOW - 5_000);
    const plan = planExpiry([entry('1', NOW + 5_000)], [r], NOW);
    expect(plan).toEqual({ due: [r], notYetDue: [], stale: [] });
  });

  test('row moved earlier than the entry but not yet due → notYetDue by the row time', () => {
    const e = entry('1', NOW + 9_000);
    const plan = planExpiry([e], [row('1', 'ACTIVE', NOW + 1_000)], NOW);
    expect(plan.notYetDue).toEqual([{ entry: e, retryInMs: 1_000 }]);
    expect(plan.due).toEqual([]);
    expect(plan.stale).toEqual([]);
  });

  test('duplicate entries for one due row → one due, the other stale', () => {
    const first = entry('1', NOW - 1);
    const second = entry('1', NOW - 1);
    const r = row('1', 'ACTIVE', NOW - 1);
    const plan = planExpiry([first, second], [r], NOW);
    expect(plan.due).toEqual([r]);
    expect(plan.stale).toHaveLength(1);
    expect(plan.stale[0]).toBe(second);
    expect(plan.notYetDue).toEqual([]);
  });

  test('a mixed batch sorts every entry into exactly one list, keeping input order', () => {
    const entries = [entry('1', NOW - 1), entry('2', NOW + 40), entry('3', NOW - 1), entry('4', NOW - 1), entry('5', NOW)];
    const rows = [row('5', 'ACTIVE', NOW), row('4', 'ACTIVE', NOW + 1), row('2', 'ACTIVE', NOW + 40), row('1', 'ACTIVE', NOW - 1)];
    const plan = planExpiry(entries, rows, NOW);
    expect(plan.due.map((r) => r.id)).toEqual(['1', '5']);
    expect(plan.notYetDue).toEqual([{ entry: entries[1], retryInMs: 40 }]);
    expect(plan.stale.map((e) => e.id)).toEqual(['3', '4']); // 3: no row; 4: pushed later
  });

  test('rows the lock returned in different from-states (待使用, 已锁定) are all due', () => {
    const entries = [entry('1', NOW - 1), entry('2', NOW - 1), entry('3', NOW - 1)];
    const rows = [row('1', '待使用', NOW - 1), row('2', '已锁定', NOW - 1)];
    const plan = planExpiry(entries, rows, NOW);
    expect(plan.due.map((r) => r.id)).toEqual(['1', '2']);
    expect(plan.stale).toEqual([entries[2]]);
  });
});
