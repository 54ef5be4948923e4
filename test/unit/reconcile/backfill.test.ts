import type { BucketEntry, EntityType } from '../../../src/core/bucket-entry';
import { backfill, BackfillOptions } from '../../../src/reconcile/backfill';
import type { ExpirableRow, KeysetCursor } from '../../../src/reconcile/sql/read-expirable-page';

/** An index of (expire_time, id) like the database's, read by keyset like the real query. */
function table(rows: ExpirableRow[]) {
  const sorted = [...rows].sort((a, b) => a.expireAtMs - b.expireAtMs || (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  const reads: Array<KeysetCursor | null> = [];
  const readPage = async (_entity: EntityType, _w: unknown, cursor: KeysetCursor | null, limit: number) => {
    reads.push(cursor);
    const after = cursor === null ? sorted : sorted.filter((r) => r.expireAtMs > cursor.expireAt.getTime() || (r.expireAtMs === cursor.expireAt.getTime() && BigInt(r.id) > BigInt(cursor.id)));
    return after.slice(0, limit);
  };
  return { readPage, reads, count: async () => sorted.length };
}

function options(rows: ExpirableRow[], overrides: Partial<BackfillOptions> = {}) {
  const t = table(rows);
  const routed: BucketEntry[][] = [];
  const opts: BackfillOptions = {
    entities: ['coupon'],
    window: {},
    pageSize: 3,
    count: t.count,
    readPage: t.readPage,
    route: async (entries) => {
      routed.push([...entries]);
      return { due: entries.filter((e) => e.expireAtMs < 1_000).length };
    },
    ...overrides,
  };
  return { opts, routed, reads: t.reads };
}

// Ties on expire_time and ids past 2^53: the cursor must order by id exactly, as a string.
const rows: ExpirableRow[] = [
  { id: '9007199254740993', expireAtMs: 500 },
  { id: '9007199254740992', expireAtMs: 500 },
  { id: '7', expireAtMs: 2_000 },
  { id: '8', expireAtMs: 2_000 },
  { id: '1', expireAtMs: 3_000 },
  { id: '2', expireAtMs: 4_000 },
  { id: '3', expireAtMs: 5_000 },
];

test('pages through every row once, in index order, routing each as an entry of its entity', async () => {
  const { opts, routed, reads } = options(rows);
  const result = await backfill(opts);
  expect(routed.map((page) => page.map((e) => e.id))).toEqual([['9007199254740992', '9007199254740993', '7'], ['8', '1', '2'], ['3']]);
  expect(routed.flat().every((e) => e.entity === 'coupon' && e.v === 1)).toBe(true);
  expect(reads).toEqual([null, { expireAt: new Date(2_000), id: '7' }, { expireAt: new Date(4_000), id: '2' }]);
  expect(result).toEqual({ complete: true, entities: [{ entity: 'coupon', total: 7, read: 7, routed: 7, due: 2, lastExpireAtMs: 5_000 }] });
});

test('a full last page costs one more (empty) read; an empty table none after the first', async () => {
  const full = options(rows.slice(0, 6));
  await backfill(full.opts);
  expect(full.reads).toHaveLength(3);
  const empty = options([]);
  const result = await backfill(empty.opts);
  expect(empty.routed).toEqual([]);
  expect(result.entities).toEqual([{ entity: 'coupon', total: 0, read: 0, routed: 0, due: 0 }]);
});

test('each entity in turn, with its own progress', async () => {
  const seen: string[] = [];
  const { opts } = options(rows, { entities: ['coupon', 'order'], onStart: (entity, total) => seen.push(`${entity}:${total}`) });
  const result = await backfill(opts);
  expect(seen).toEqual(['coupon:7', 'order:7']);
  expect(result.entities.map((e) => [e.entity, e.read])).toEqual([['coupon', 7], ['order', 7]]);
});

test('a stop request ends the run between pages, reporting where it got to', async () => {
  let pages = 0;
  const { opts, routed } = options(rows, { onProgress: () => (pages += 1), stopRequested: () => pages >= 1 });
  const result = await backfill(opts);
  expect(routed).toHaveLength(1);
  expect(result).toMatchObject({ complete: false, entities: [{ read: 3, lastExpireAtMs: 2_000 }] });
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

test.each([0, -1, 1.5])('page size %p is refused', async (pageSize) => {
  await expect(backfill(options(rows, { pageSize }).opts)).rejects.toThrow(RangeError);
});
