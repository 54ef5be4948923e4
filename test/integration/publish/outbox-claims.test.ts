/**
 * The relay's batch locks against the real database: loops lock side by side (none waits for
 * another's row locks), take disjoint rows, keep each entity's rows in outbox order, walk the
 * index without sorting, never read past poison rows, and lose their batch when their
 * connection dies or stalls past the lease. In a database of this file's own, emptied before
 * each test.
 *
 * @lane isolated
 */
import type { Knex } from 'knex';
import { createDb, Db } from '../../../src/db/knex';
import { limitIdleHold, lockOutboxBatch, LOCK_NEXT_UNPUBLISHED_SQL, UNPUBLISHED_BEFORE_SQL } from '../../../src/publish/sql/lock-outbox-batch';
import { markPublished } from '../../../src/publish/sql/mark-published';
import { setAsidePoison } from '../../../src/publish/sql/set-aside-poison';
import { config } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { entityIds, idsOf, insertCouponEvents, planOf, readNext } from './outbox-fixtures';

let testDb: TestDatabase;
let db: Db;
/** Other connections: a loop's transaction stays open on its own while another loop works. */
const others: Db[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase('outbox_claims');
  db = testDb.db;
});

beforeEach(async () => {
  await db.raw('DELETE FROM outbox');
  await db.raw('DELETE FROM outbox_poison');
});

afterEach(async () => {
  await Promise.all(others.splice(0).map((o) => o.destroy()));
});

afterAll(async () => {
  await testDb?.drop();
});

function otherConnection(): Db {
  const conn = createDb(config.db, { database: testDb.name });
  others.push(conn);
  return conn;
}

/** A loop's open transaction whose lock waits give up after a second: a lock that waited would fail. */
async function openLoop(conn: Knex = otherConnection()): Promise<Knex.Transaction> {
  const trx = await conn.transaction();
  await trx.raw('SET SESSION innodb_lock_wait_timeout = 1');
  return trx;
}

test('a loop does not wait for a batch another loop holds, and that loop does not wait for it either', async () => {
  const ids = await insertCouponEvents(db, entityIds(20));
  // Loop A holds the first five rows (its send in flight).
  const a = await openLoop();
  expect(idsOf((await lockOutboxBatch(a, 5)).rows)).toEqual(ids.slice(0, 5));
  // Loop B locks meanwhile and keeps its transaction open too: the next five, no wait.
  const b = await openLoop();
  expect(idsOf((await lockOutboxBatch(b, 5)).rows)).toEqual(ids.slice(5, 10));
  // Both publish and commit, in either order, without waiting on each other.
  await expect(markPublished(b, ids.slice(5, 10), 'loop-b')).resolves.toBe(5);
  await expect(markPublished(a, ids.slice(0, 5), 'loop-a')).resolves.toBe(5);
  await b.commit();
  await a.commit();
  const owners = (await db('outbox').orderBy('id').select('claimed_by')) as Array<{ claimed_by: string | null }>;
  expect(owners.map((r) => r.claimed_by)).toEqual([...Array(5).fill('loop-a'), ...Array(5).fill('loop-b'), ...Array(10).fill(null)]);
});

test('eight loops locking at once take disjoint batches that together are every row, each published by its taker', async () => {
  const ids = await insertCouponEvents(db, entityIds(400));
  const taken = new Map<string, string>();
  const loops = Array.from({ length: 8 }, (_, n) => `loop-${n}`);
  await Promise.all(
    loops.map(async (loop) => {
      for (;;) {
        const rows = await db.transaction(async (trx) => {
          const batch = await lockOutboxBatch(trx, 10);
          await markPublished(trx, idsOf(batch.rows), loop);
          return batch.rows;
        });
        if (rows.length === 0) return;
        for (const row of rows) {
          expect(taken.get(row.id)).toBeUndefined();
          taken.set(row.id, loop);
        }
      }
    }),
  );
  expect([...taken.keys()].sort()).toEqual([...ids].sort());
  const published = (await db('outbox').select('id', 'claimed_by')) as Array<{ id: number; claimed_by: string }>;
  expect(published.every((r) => taken.get(String(r.id)) === r.claimed_by)).toBe(true);
  // More than one loop got rows: the loops really ran side by side.
  expect(new Set(taken.values()).size).toBeGreaterThan(1);
});

test('a row waits while an earlier row of its entity is held by another loop, and goes once that row is published', async () => {
  const [x, y] = entityIds(2);
  const [x1, y1, x2] = await insertCouponEvents(db, [x!, y!, x!]);

  // Loop A holds x1 (locked, its send in flight): x's second row must not overtake it.
  const a = await openLoop();
  expect(idsOf((await lockOutboxBatch(a, 1)).rows)).toEqual([x1]);
  const b = await db.transaction((trx) => lockOutboxBatch(trx, 10));
  expect([idsOf(b.rows), b.deferred]).toEqual([[y1], 1]);
  // Still waiting while x1 is held, even for a batch that could take x2 alone.
  await db.transaction(async (trx) => markPublished(trx, [y1!], 'loop-b'));
  await expect(db.transaction((trx) => lockOutboxBatch(trx, 10))).resolves.toEqual({ rows: [], deferred: 1 });

  await markPublished(a, [x1!], 'loop-a');
  await a.commit();
  expect(idsOf((await db.transaction((trx) => lockOutboxBatch(trx, 10))).rows)).toEqual([x2]);
});

test('a batch held by a loop that gives up (rollback) goes, in order, to the next loop', async () => {
  const [x, y] = entityIds(2);
  const [x1, y1, x2] = await insertCouponEvents(db, [x!, y!, x!]);
  const a = await openLoop();
  await lockOutboxBatch(a, 1);
  await a.rollback();
  expect(idsOf((await db.transaction((trx) => lockOutboxBatch(trx, 10))).rows)).toEqual([x1, y1, x2]);
});

test('a loop whose connection dies loses its batch at once; one that stalls loses it after the lease', async () => {
  const ids = await insertCouponEvents(db, entityIds(4));
  const lockable = async (): Promise<string[]> => idsOf((await db.transaction((trx) => lockOutboxBatch(trx, 10))).rows);

  // Dies: the process is gone and the server drops its connection (KILL does what a closed
  // socket does); the server rolls back and frees the rows.
  const a = await openLoop();
  expect(idsOf((await lockOutboxBatch(a, 2)).rows)).toEqual(ids.slice(0, 2));
  expect(await lockable()).toEqual(ids.slice(2));
  const [[{ connectionId }]] = (await a.raw('SELECT CONNECTION_ID() AS connectionId')) as [[{ connectionId: number }]];
  await db.raw('KILL CONNECTION ?', [connectionId]);
  await a.rollback().catch(() => undefined);
  await waitFor('the dead loop\'s rows to be free', async () => ((await lockable()).length === 4 ? true : undefined), { timeoutMs: 5_000 });

  // Stalls: a send that never returns, the connection alive. The database ends the transaction
  // after the lease (whole seconds: 1 s here) and the rows are free again.
  const b = await openLoop();
  await limitIdleHold(b, 1_000);
  expect(idsOf((await lockOutboxBatch(b, 2)).rows)).toEqual(ids.slice(0, 2));
  expect(await lockable()).toEqual(ids.slice(2));
  await waitFor('the stalled loop\'s rows to be free', async () => ((await lockable()).length === 4 ? true : undefined), { timeoutMs: 10_000 });
  // Its late mark fails: nothing is marked published by a loop that lost its batch.
  await expect(markPublished(b, ids.slice(0, 2), 'loop-b')).rejects.toThrow();
  await b.rollback().catch(() => undefined);
  await expect(db('outbox').whereNotNull('published_at').count({ n: '*' })).resolves.toEqual([{ n: 0 }]);
});

test('both batch reads walk idx_outbox_unpublished in index order, with no filesort', async () => {
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
  // And the walk stops after the batch: 50 rows locked, about 50 index entries read.
  const entries = await db.transaction(async (trx) => {
    const before = await readNext(trx);
    const { rows } = await lockOutboxBatch(trx, 50);
    expect(rows).toHaveLength(50);
    return (await readNext(trx)) - before;
  });
  expect(entries).toBeLessThan(150);
});

test('poison rows leave the unpublished range: a loop reads past none of them', async () => {
  const batchReads = async (): Promise<number> =>
    db.transaction(async (trx) => {
      const before = await readNext(trx);
      const { rows } = await lockOutboxBatch(trx, 10);
      expect(rows).toHaveLength(10);
      return (await readNext(trx)) - before;
    });

  // 2000 rows that cannot be encoded, ahead of 10 good ones: a loop sets them aside.
  const poison = await insertCouponEvents(db, entityIds(2_000));
  const good = await insertCouponEvents(db, entityIds(10));
  const reasons = poison.map((id) => ({ id, reason: `bad row ${id}` }));
  await db.transaction(async (trx) => {
    expect(idsOf((await lockOutboxBatch(trx, 2_000)).rows)).toEqual(poison);
    await expect(setAsidePoison(trx, reasons, 'loop-poison')).resolves.toBe(2_000);
  });
  await expect(db('outbox').whereIn('id', poison).count({ n: '*' })).resolves.toEqual([{ n: 0 }]);
  const aside = (await db('outbox_poison').orderBy('id').select('id', 'reason', 'set_aside_by')) as Array<{ id: number; reason: string; set_aside_by: string }>;
  expect(aside.map((r) => [String(r.id), r.reason, r.set_aside_by])).toEqual(poison.map((id) => [id, `bad row ${id}`, 'loop-poison']));
  // The next batch is the good rows, read without walking past the 2000.
  expect(await batchReads()).toBeLessThan(50);
  expect(idsOf((await db.transaction((trx) => lockOutboxBatch(trx, 100))).rows)).toEqual(good);
});

test('a row published meanwhile is not set aside', async () => {
  const [published, bad] = await insertCouponEvents(db, entityIds(2));
  await db.raw('UPDATE outbox SET published_at = NOW(3) WHERE id = ?', [published!]);
  await expect(
    db.transaction((trx) => setAsidePoison(trx, [{ id: published!, reason: 'bad' }, { id: bad!, reason: 'bad' }], 'loop-a')),
  ).resolves.toBe(1);
  expect(((await db('outbox').select('id')) as Array<{ id: number }>).map((r) => String(r.id))).toEqual([published]);
  expect(((await db('outbox_poison').select('id')) as Array<{ id: number }>).map((r) => String(r.id))).toEqual([bad]);
});
