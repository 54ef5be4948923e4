/**
 * The relay's claim against the real database: claims by several loops run side by side (none
 * waits for another's row locks), take disjoint rows, keep each entity's rows in outbox order,
 * walk the index without sorting, and never read past poison rows. In a database of this
 * file's own, emptied before each test.
 */
import type { Knex } from 'knex';
import { createDb, Db } from '../../../src/db/knex';
import { claimOutboxBatch, LOCK_NEXT_UNPUBLISHED_SQL, UNPUBLISHED_BEFORE_SQL } from '../../../src/publish/sql/claim-outbox-batch';
import { markPublished } from '../../../src/publish/sql/mark-published';
import { setAsidePoison } from '../../../src/publish/sql/set-aside-poison';
import { config } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { entityIds, idsOf, insertCouponEvents, planOf, readNext } from './outbox-fixtures';

let testDb: TestDatabase;
let db: Db;
const LEASE_MS = 30_000;

beforeAll(async () => {
  testDb = await createTestDatabase('outbox_claims');
  db = testDb.db;
});

beforeEach(async () => {
  await db.raw('DELETE FROM outbox');
  await db.raw('DELETE FROM outbox_poison');
});

afterAll(async () => {
  await testDb?.drop();
});

/** Runs `work` in a transaction whose lock waits give up after a second: a claim that waited would fail. */
function impatient<T>(work: (trx: Knex.Transaction) => Promise<T>, conn: Knex = db): Promise<T> {
  return conn.transaction(async (trx) => {
    await trx.raw('SET SESSION innodb_lock_wait_timeout = 1');
    try {
      return await work(trx);
    } finally {
      await trx.raw('SET SESSION innodb_lock_wait_timeout = DEFAULT');
    }
  });
}

test('a claim does not wait for a claim in progress, and neither does that claim wait for it', async () => {
  const ids = await insertCouponEvents(db, entityIds(20));
  const other = createDb(config.db, { database: testDb.name });
  try {
    // Loop A is half-way through its claim: it holds the row locks on the first five rows.
    await impatient(async (a) => {
      const [lockedByA] = (await a.raw(LOCK_NEXT_UNPUBLISHED_SQL, [5])) as [Array<{ id: number }>];
      expect(lockedByA.map((r) => String(r.id))).toEqual(ids.slice(0, 5));
      // Loop B claims meanwhile, on its own connection, and keeps its transaction open too. The
      // old claim (UPDATE … ORDER BY … LIMIT) waited here for A's locks and timed out.
      await impatient(async (b) => {
        const claimedByB = await claimOutboxBatch(b, 'loop-b', LEASE_MS, 5);
        expect(idsOf(claimedByB.rows)).toEqual(ids.slice(5, 10));
        // And A finishes its claim while B still holds its locks: no wait either way.
        await a.raw('UPDATE outbox SET claimed_by = ?, claim_until = NOW(3) + INTERVAL 30 SECOND WHERE id IN (?)', ['loop-a', ids.slice(0, 5)]);
      }, other);
    });
  } finally {
    await other.destroy();
  }
  const owners = (await db('outbox').orderBy('id').select('claimed_by')) as Array<{ claimed_by: string | null }>;
  expect(owners.map((r) => r.claimed_by)).toEqual([...Array(5).fill('loop-a'), ...Array(5).fill('loop-b'), ...Array(10).fill(null)]);
});

test('eight loops claiming at once take disjoint batches that together are every row, each leased to its taker', async () => {
  const ids = await insertCouponEvents(db, entityIds(400));
  const taken = new Map<string, string>();
  const loops = Array.from({ length: 8 }, (_, n) => `loop-${n}`);
  await Promise.all(
    loops.map(async (loop) => {
      for (;;) {
        const { rows } = await claimOutboxBatch(db, loop, LEASE_MS, 10);
        if (rows.length === 0) return;
        for (const row of rows) {
          expect(taken.get(row.id)).toBeUndefined();
          taken.set(row.id, loop);
        }
      }
    }),
  );
  expect([...taken.keys()].sort()).toEqual([...ids].sort());
  const leased = (await db('outbox').select('id', 'claimed_by')) as Array<{ id: number; claimed_by: string }>;
  expect(leased.every((r) => taken.get(String(r.id)) === r.claimed_by)).toBe(true);
  // More than one loop got rows: the claims really ran side by side.
  expect(new Set(taken.values()).size).toBeGreaterThan(1);
});

test('a row waits while an earlier row of its entity is in flight, and is claimed once that row is published', async () => {
  const [x, y] = entityIds(2);
  const [x1, y1, x2] = await insertCouponEvents(db, [x!, y!, x!]);

  // In flight under loop A's lease: x's second row must not overtake it.
  expect(idsOf((await claimOutboxBatch(db, 'loop-a', LEASE_MS, 1)).rows)).toEqual([x1]);
  const b = await claimOutboxBatch(db, 'loop-b', LEASE_MS, 10);
  expect([idsOf(b.rows), b.deferred]).toEqual([[y1], 1]);
  expect((await db('outbox').where({ id: x2 }).first()) as { claim_until: Date | null }).toMatchObject({ claim_until: null });

  // Still waiting while x1 is unpublished, even on a claim of the deferred row alone.
  await expect(claimOutboxBatch(db, 'loop-b', LEASE_MS, 10)).resolves.toEqual({ rows: [], deferred: 1 });
  await markPublished(db, [x1!], 'loop-a');
  expect(idsOf((await claimOutboxBatch(db, 'loop-b', LEASE_MS, 10)).rows)).toEqual([x2]);
});

test('a row also waits for an earlier row of its entity that another loop is claiming at this very moment', async () => {
  const [x, y] = entityIds(2);
  const [x1, y1, x2] = await insertCouponEvents(db, [x!, y!, x!]);
  const other = createDb(config.db, { database: testDb.name });
  try {
    await impatient(async (a) => {
      // Loop A has locked x1 and not yet leased it: B's claim skips it and must not take x2.
      await a.raw(LOCK_NEXT_UNPUBLISHED_SQL, [1]);
      const b = await impatient((trx) => claimOutboxBatch(trx, 'loop-b', LEASE_MS, 10), other);
      expect([idsOf(b.rows), b.deferred]).toEqual([[y1], 1]);
    });
  } finally {
    await other.destroy();
  }
  // A gave up without leasing: x1 then x2 go in order.
  expect(idsOf((await claimOutboxBatch(db, 'loop-a', LEASE_MS, 10)).rows)).toEqual([x1, x2]);
});

test('both claim reads walk idx_outbox_unpublished in index order, with no filesort', async () => {
  const ids = await insertCouponEvents(db, entityIds(2_000));
  await db.raw('UPDATE outbox SET published_at = NOW(3) WHERE id <= ?', [ids[999]!]);
  await db.raw('ANALYZE TABLE outbox');
  for (const [sql, bindings] of [
    [LOCK_NEXT_UNPUBLISHED_SQL, [50]],
    [UNPUBLISHED_BEFORE_SQL, [ids[1_049]!]],
  ] as const) {
    const { access, text } = await planOf(db, sql, bindings);
    expect(access).toMatchObject({ key: 'idx_outbox_unpublished' });
    expect(['ref', 'range']).toContain(access['access_type']);
    expect(text).not.toMatch(/filesort/);
  }
  // And the walk stops after the batch: 50 rows claimed, about 50 index entries read.
  const entries = await db.transaction(async (trx) => {
    const before = await readNext(trx);
    const { rows } = await claimOutboxBatch(trx, 'loop-a', LEASE_MS, 50);
    expect(rows).toHaveLength(50);
    return (await readNext(trx)) - before;
  });
  expect(entries).toBeLessThan(150);
});

test('poison rows leave the unpublished range: a claim reads past none of them', async () => {
  const claimReads = async (): Promise<number> =>
    db.transaction(async (trx) => {
      const before = await readNext(trx);
      const { rows } = await claimOutboxBatch(trx, 'loop-good', LEASE_MS, 10);
      expect(rows).toHaveLength(10);
      const reads = (await readNext(trx)) - before;
      await trx.raw('UPDATE outbox SET claimed_by = NULL, claim_until = NULL WHERE id IN (?)', [idsOf(rows)]);
      return reads;
    });

  // 2000 poison rows ahead of 10 good ones, set aside the old way: still unpublished, leased for ever.
  const poison = await insertCouponEvents(db, entityIds(2_000));
  await insertCouponEvents(db, entityIds(10));
  await db.raw("UPDATE outbox SET claimed_by = 'poison', claim_until = '9999-12-31' WHERE id IN (?)", [poison]);
  // Every claim read past all 2000 (twice: the locking read and the in-flight read).
  expect(await claimReads()).toBeGreaterThanOrEqual(2_000);

  // Set aside now: moved to outbox_poison with the reason, out of the outbox.
  await db.raw('UPDATE outbox SET claimed_by = ?, claim_until = NOW(3) + INTERVAL 30 SECOND WHERE id IN (?)', ['loop-poison', poison]);
  const reasons = poison.map((id) => ({ id, reason: `bad row ${id}` }));
  await expect(setAsidePoison(db, reasons, 'loop-poison')).resolves.toBe(2_000);
  await expect(db('outbox').whereIn('id', poison).count({ n: '*' })).resolves.toEqual([{ n: 0 }]);
  const aside = (await db('outbox_poison').orderBy('id').select('id', 'reason', 'set_aside_by')) as Array<{ id: number; reason: string; set_aside_by: string }>;
  expect(aside.map((r) => [String(r.id), r.reason, r.set_aside_by])).toEqual(poison.map((id) => [id, `bad row ${id}`, 'loop-poison']));
  expect(await claimReads()).toBeLessThan(50);
});

test('only rows the loop still holds are set aside', async () => {
  const [mine, lost] = await insertCouponEvents(db, entityIds(2));
  await db.raw('UPDATE outbox SET claimed_by = ?, claim_until = NOW(3) + INTERVAL 30 SECOND WHERE id = ?', ['loop-a', mine!]);
  await db.raw('UPDATE outbox SET claimed_by = ?, claim_until = NOW(3) + INTERVAL 30 SECOND WHERE id = ?', ['loop-b', lost!]);
  await expect(setAsidePoison(db, [{ id: mine!, reason: 'bad' }, { id: lost!, reason: 'bad' }], 'loop-a')).resolves.toBe(1);
  expect(((await db('outbox').select('id')) as Array<{ id: number }>).map((r) => String(r.id))).toEqual([lost]);
  expect(((await db('outbox_poison').select('id')) as Array<{ id: number }>).map((r) => String(r.id))).toEqual([mine]);
});
