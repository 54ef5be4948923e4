import type { BucketEntry } from '../../../src/core/bucket-entry';
import type { StatusValue, Transition } from '../../../src/core/entity-catalogue';
import { backfill, BackfillOptions } from '../../../src/reconcile/backfill';
import { keysetShape } from '../../../src/reconcile/sql/due-keyset';
import { countQuery, pageQuery, windowBound, type ExpirableRow, type KeysetCursor } from '../../../src/reconcile/sql/read-expirable-page';
import { couponExpired, defaults, orderCancelled, ticketLapsed, tickets, twoCouponTransitions } from './catalogues';

const sortIndex = (rows: readonly ExpirableRow[]) => [...rows].sort((a, b) => a.expireAtMs - b.expireAtMs || (BigInt(a.id) < BigInt(b.id) ? -1 : 1));

/** An index of (status, due, id) like the database's, read by keyset like the real query. */
function table(byStatus: ReadonlyMap<StatusValue, ExpirableRow[]>) {
  const reads: Array<{ from: StatusValue; cursor: KeysetCursor | null }> = [];
  const readPage = async (_t: Transition, from: StatusValue, _w: unknown, cursor: KeysetCursor | null, limit: number) => {
    reads.push({ from, cursor });
    const sorted = sortIndex(byStatus.get(from) ?? []);
    const after =
      cursor === null
        ? sorted
        : sorted.filter((r) => r.expireAtMs > cursor.expireAtMs || (r.expireAtMs === cursor.expireAtMs && BigInt(r.id) > BigInt(cursor.id)));
    return after.slice(0, limit);
  };
  return { readPage, reads, count: async () => [...byStatus.values()].reduce((n, rows) => n + rows.length, 0) };
}

function options(rows: ExpirableRow[] | ReadonlyMap<StatusValue, ExpirableRow[]>, overrides: Partial<BackfillOptions> = {}) {
  const t = table(Array.isArray(rows) ? new Map([['ACTIVE', rows]]) : (rows as ReadonlyMap<StatusValue, ExpirableRow[]>));
  const routed: BucketEntry[][] = [];
  const opts: BackfillOptions = {
    catalogue: defaults,
    transitions: [couponExpired],
    window: {},
    pageSize: 3,
    count: t.count,
    readPage: (transition, _location, from, w, cursor, limit) => t.readPage(transition, from, w, cursor, limit),
    route: async (entries) => {
      routed.push([...entries]);
      return { due: entries.filter((e) => e.expireAtMs < 1_000).length };
    },
    // Long after every row's fire points (the shipped file reminds 3d, 1d, 30m before): none scheduled.
    now: () => 10 * 86_400_000,
    ...overrides,
  };
  return { opts, routed, reads: t.reads };
}

// Ties on the due time and ids past 2^53: the cursor must order by id exactly, as a string.
const rows: ExpirableRow[] = [
  { id: '9007199254740993', expireAtMs: 500 },
  { id: '9007199254740992', expireAtMs: 500 },
  { id: '7', expireAtMs: 2_000 },
  { id: '8', expireAtMs: 2_000 },
  { id: '1', expireAtMs: 3_000 },
  { id: '2', expireAtMs: 4_000 },
  { id: '3', expireAtMs: 5_000 },
];

test('pages through every row once, in index order, routing each as an entry of its transition', async () => {
  const { opts, routed, reads } = options(rows);
  const result = await backfill(opts);
  expect(routed.map((page) => page.map((e) => e.id))).toEqual([['9007199254740992', '9007199254740993', '7'], ['8', '1', '2'], ['3']]);
  expect(routed.flat().every((e) => e.entity === 'coupon' && e.transition === 'expired')).toBe(true);
  expect(reads.map((r) => r.cursor)).toEqual([null, { expireAtMs: 2_000, id: '7' }, { expireAtMs: 4_000, id: '2' }]);
  expect(result).toEqual({
    complete: true,
    notStarted: [],
    transitions: [{ entity: 'coupon', transition: 'expired', total: 7, read: 7, routed: 7, due: 2, reminders: 0, lastExpireAtMs: 5_000 }],
  });
});

test('a full last page costs one more (empty) read; an empty table none after the first', async () => {
  const full = options(rows.slice(0, 6));
  await backfill(full.opts);
  expect(full.reads).toHaveLength(3);
  const empty = options([]);
  const result = await backfill(empty.opts);
  expect(empty.routed).toEqual([]);
  expect(result.transitions).toEqual([{ entity: 'coupon', transition: 'expired', total: 0, read: 0, routed: 0, due: 0, reminders: 0 }]);
});

test('each transition in turn, with its own progress', async () => {
  const seen: string[] = [];
  const byStatus = new Map([
    ['ACTIVE', rows],
    ['UNPAID', rows.slice(0, 2)],
  ]);
  const { opts } = options(byStatus, { transitions: [couponExpired, orderCancelled], onStart: (t, total) => seen.push(`${t.ref}:${total}`) });
  const result = await backfill(opts);
  expect(seen).toEqual(['coupon.expired:9', 'order.cancelled:9']);
  expect(result.transitions.map((e) => [e.entity, e.transition, e.read])).toEqual([
    ['coupon', 'expired', 7],
    ['order', 'cancelled', 2],
  ]);
});

test('several from-values (an integer status): each its own range, merged in (due, id) order, so a stop leaves no gap before the last row routed', async () => {
  const held = [1, 4, 6, 9].map((ms, i) => ({ id: String(10 + i), expireAtMs: ms * 1_000 }));
  const waiting = [2, 3, 5, 7, 8].map((ms, i) => ({ id: String(20 + i), expireAtMs: ms * 1_000 }));
  const byStatus = new Map<StatusValue, ExpirableRow[]>([
    [1, held],
    [2, waiting],
  ]);
  const { opts, routed, reads } = options(byStatus, { catalogue: tickets, transitions: [ticketLapsed] });
  const result = await backfill(opts);
  expect(routed.map((p) => p.map((e) => e.expireAtMs / 1_000))).toEqual([
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
  ]);
  expect(routed.flat().every((e) => e.entity === 'ticket' && e.transition === 'lapsed')).toBe(true);
  // A range is read again only when its next row is needed; one short read ends it.
  expect(reads.map((r) => r.from)).toEqual([1, 2, 2, 1]);
  expect(result.transitions[0]).toMatchObject({ read: 9, lastExpireAtMs: 9_000 });

  let pages = 0;
  const stopped = options(byStatus, { catalogue: tickets, transitions: [ticketLapsed], onProgress: () => (pages += 1), stopRequested: () => pages >= 1 });
  const partial = await backfill(stopped.opts);
  // Everything due before the last routed row (3 s) is routed: --since 3 s resumes without a gap.
  expect(stopped.routed.flat().map((e) => e.expireAtMs)).toEqual([1_000, 2_000, 3_000]);
  expect(partial).toMatchObject({ complete: false, transitions: [{ lastExpireAtMs: 3_000 }] });
});

test('a stop request ends the run between pages, reporting where it got to and what was not started', async () => {
  let pages = 0;
  const { opts, routed } = options(rows, { transitions: [couponExpired, orderCancelled], onProgress: () => (pages += 1), stopRequested: () => pages >= 1 });
  const result = await backfill(opts);
  expect(routed).toHaveLength(1);
  expect(result).toMatchObject({ complete: false, transitions: [{ read: 3, lastExpireAtMs: 2_000 }], notStarted: ['order.cancelled'] });
});

test('rows added during the run raise the total rather than overflow it', async () => {
  const { opts } = options(rows, { count: async () => 2 });
  const progress: number[] = [];
  await backfill({ ...opts, onProgress: (p) => progress.push(p.total) });
  expect(progress).toEqual([3, 6, 7]);
});

test('a failed append fails the run (nothing is reported routed that was not)', async () => {
  const { opts } = options(rows, { route: async () => Promise.reject(new Error('broker down')) });
  await expect(backfill(opts)).rejects.toThrow('broker down');
});

test('the fire points still ahead of each row are scheduled after its transition entry; past ones and digests without a user are skipped and counted', async () => {
  const DAY = 86_400_000;
  const now = 100 * DAY;
  const ahead: ExpirableRow[] = [
    { id: '1', expireAtMs: now + 2 * DAY, user: '9007199254740993' }, // 3d past; 1d digest and 30m ahead
    { id: '2', expireAtMs: now + 2 * DAY + 1, user: null }, // no user: its digest cannot be keyed
    { id: '3', expireAtMs: now + 10 * 60_000, user: 5 }, // every fire point past
  ];
  const skipped: string[] = [];
  const { opts, routed } = options(ahead, { now: () => now, onReminderSkipped: (reason) => void skipped.push(reason) });
  const result = await backfill(opts);
  const [transitions, reminders] = routed;
  expect(transitions!.map((e) => [e.id, e.expireAtMs, e.remind])).toEqual([
    ['3', now + 10 * 60_000, undefined],
    ['1', now + 2 * DAY, undefined],
    ['2', now + 2 * DAY + 1, undefined],
  ]);
  // The 1d digest fires at the start of its hour (the shipped window), the 30m reminder at its own time.
  const hourStart = (ms: number) => Math.floor(ms / 3_600_000) * 3_600_000;
  expect(reminders!.map((e) => [e.id, e.expireAtMs, e.remind])).toEqual([
    ['1', hourStart(now + DAY), { dueAtMs: now + 2 * DAY, beforeMs: DAY, user: '9007199254740993' }],
    ['1', now + 2 * DAY - 30 * 60_000, { dueAtMs: now + 2 * DAY, beforeMs: 30 * 60_000 }],
    ['2', now + 2 * DAY + 1 - 30 * 60_000, { dueAtMs: now + 2 * DAY + 1, beforeMs: 30 * 60_000 }],
  ]);
  expect(routed).toHaveLength(2);
  expect(skipped.sort()).toEqual(['no_user', 'no_user', 'past', 'past', 'past', 'past']);
  expect(result.transitions[0]).toMatchObject({ read: 3, routed: 3, reminders: 3 });
});

test.each([0, -1, 1.5])('page size %p is refused', async (pageSize) => {
  await expect(backfill(options(rows, { pageSize }).opts).then(() => undefined)).rejects.toThrow(RangeError);
});

describe('the page read', () => {
  const coupon = keysetShape(defaults.entities[0]!, couponExpired, defaults.entities[0]!.locations[0]!);
  const ticket = keysetShape(tickets.entities[0]!, ticketLapsed, tickets.entities[0]!.locations[0]!);
  const window = { since: new Date(1_500), until: new Date(9_000) };

  test("today's statement for coupons: the same shape, its identifiers quoted", () => {
    const q = pageQuery(coupon, 'ACTIVE', window, { expireAtMs: 2_000, id: '7' }, 100);
    expect(q.sql).toBe(
      'SELECT `id`, `expire_time` FROM `coupons` FORCE INDEX (`idx_coupons_status_expire_id`) WHERE `status` = ? AND `expire_time` >= ? AND `expire_time` < ?' +
        ' AND (`expire_time` > ? OR (`expire_time` = ? AND `id` > ?)) ORDER BY `status`, `expire_time`, `id` LIMIT ?',
    );
    expect(q.bindings).toEqual(['ACTIVE', new Date(1_500), new Date(9_000), new Date(2_000), new Date(2_000), '7', 100]);
  });

  test("with digests, backfill's read also selects the user column (the digest is keyed by it); the scanner's shape does not", () => {
    const withUser = keysetShape(defaults.entities[0]!, couponExpired, defaults.entities[0]!.locations[0]!, { withUser: true });
    expect(pageQuery(withUser, 'ACTIVE', {}, null, 10).sql).toMatch(/^SELECT `id`, `expire_time`, `user_id` FROM `coupons` FORCE INDEX/);
    expect(keysetShape(defaults.entities[1]!, orderCancelled, defaults.entities[1]!.locations[0]!, { withUser: true }).userColumn).toBeUndefined();
    expect(coupon.userColumn).toBeUndefined();
  });

  test('an epoch_ms due column is bounded and keyed in ms; an integer status is bound as a number', () => {
    const q = pageQuery(ticket, 2, window, { expireAtMs: 2_000, id: '9007199254740993' }, 50);
    expect(q.sql).toContain('FROM `tickets` FORCE INDEX (`idx_tickets_state_deadline`) WHERE `state` = ? AND `deadline_ms` >= ? AND `deadline_ms` < ?');
    expect(q.sql).toContain('ORDER BY `state`, `deadline_ms`, `ticket_id` LIMIT ?');
    expect(q.bindings).toEqual([2, 1_500, 9_000, 2_000, 2_000, '9007199254740993', 50]);
    expect(pageQuery(ticket, 1, {}, null, 50)).toEqual({ sql: expect.not.stringContaining('>='), bindings: [1, 50] });
  });

  test('the count covers every from-value (no order needed)', () => {
    expect(countQuery(ticket, ticketLapsed.from, window)).toEqual({
      sql: 'SELECT COUNT(*) AS n FROM `tickets` FORCE INDEX (`idx_tickets_state_deadline`) WHERE `state` IN (?, ?) AND `deadline_ms` >= ? AND `deadline_ms` < ?',
      bindings: [1, 2, 1_500, 9_000],
    });
  });

  test('epoch seconds: both bounds round up, so [since, until) holds exactly the seconds whose instant is in it', () => {
    expect([windowBound('epoch_s', 1_500), windowBound('epoch_s', 2_000), windowBound('epoch_s', 2_001)]).toEqual([2, 2, 3]);
    const unlocked = twoCouponTransitions.transitions[1]!;
    const q = pageQuery(
      keysetShape(twoCouponTransitions.entities[0]!, unlocked, twoCouponTransitions.entities[0]!.locations[0]!),
      'LOCKED',
      window,
      { expireAtMs: 3_000, id: '1' },
      10,
    );
    expect(q.bindings).toEqual(['LOCKED', 2, 9, 3, 3, '1', 10]);
  });
});
