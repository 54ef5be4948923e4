/**
 * Outbox retention against the real database: a pass deletes exactly the rows published longer
 * ago than the retention, page by page in index order, leaves unpublished, recently published
 * and set-aside rows alone, and can run on several instances at once. In a database of this
 * file's own, emptied before each test.
 */
import type { Db } from '../../../src/db/knex';
import { OutboxRetention, OutboxRetentionOptions } from '../../../src/publish/outbox-retention';
import { purgePageSql } from '../../../src/publish/sql/purge-published-outbox';
import { logger } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { entityIds, insertCouponEvents, planOf } from './outbox-fixtures';

let testDb: TestDatabase;
let db: Db;
const DAY_MS = 86_400_000;
const retentions: OutboxRetention[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase('outbox_retention');
  db = testDb.db;
});

beforeEach(async () => {
  await db.raw('DELETE FROM outbox');
  await db.raw('DELETE FROM outbox_poison');
});

afterEach(async () => {
  await Promise.all(retentions.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await testDb?.drop();
});

function newRetention(over: Partial<OutboxRetentionOptions> = {}): OutboxRetention {
  const retention = new OutboxRetention({ db, retentionMs: DAY_MS, batchSize: 7, pauseMs: 0, intervalMs: 60_000, logger, ...over });
  retentions.push(retention);
  return retention;
}

/** Rows in each state; published_at set relative to the database clock. */
async function seed(): Promise<{ old: string[]; recent: string[]; unpublished: string[]; leased: string[] }> {
  const counts = { old: 40, recent: 15, unpublished: 10, leased: 5 };
  const ids = await insertCouponEvents(db, entityIds(counts.old + counts.recent + counts.unpublished + counts.leased));
  let next = 0;
  const take = (n: number): string[] => ids.slice(next, (next += n));
  const groups = { old: take(counts.old), recent: take(counts.recent), unpublished: take(counts.unpublished), leased: take(counts.leased) };
  // Old rows spread over a day past the cutoff, several sharing one instant (the keyset's tie-break on id).
  for (const [i, id] of groups.old.entries()) {
    await db.raw('UPDATE outbox SET published_at = NOW(3) - INTERVAL ? MINUTE - INTERVAL 1 DAY WHERE id = ?', [Math.floor(i / 4) * 30, id]);
  }
  // Just inside the retention: published 23 hours ago.
  await db.raw('UPDATE outbox SET published_at = NOW(3) - INTERVAL 23 HOUR WHERE id IN (?)', [groups.recent]);
  await db.raw("UPDATE outbox SET claimed_by = 'loop-a', claim_until = NOW(3) + INTERVAL 30 SECOND WHERE id IN (?)", [groups.leased]);
  await db('outbox_poison').insert({
    id: 1,
    event_key: 'coupon-expired-1-0',
    event_type: 'COUPON_EXPIRED',
    entity_type: 'coupon',
    entity_id: 1,
    payload: '{',
    created_at: new Date(Date.now() - 3 * DAY_MS),
    reason: 'not JSON',
    set_aside_by: 'loop-a',
    set_aside_at: new Date(Date.now() - 3 * DAY_MS),
  });
  return groups;
}

async function remaining(): Promise<string[]> {
  return ((await db('outbox').orderBy('id').select('id')) as Array<{ id: number }>).map((r) => String(r.id));
}

test('a pass deletes exactly the rows published before now − retention, in pages, and counts them', async () => {
  const { old, recent, unpublished, leased } = await seed();
  const purged: number[] = [];
  const retention = newRetention({ observer: { purged: (n) => purged.push(n) } });

  await expect(retention.purgeOnce()).resolves.toBe(old.length);
  expect(await remaining()).toEqual([...recent, ...unpublished, ...leased]);
  // Pages of at most 7 rows (batchSize), adding up to the pass, and the instance's counter.
  expect(purged.every((n) => n >= 1 && n <= 7)).toBe(true);
  expect(purged.length).toBeGreaterThanOrEqual(Math.ceil(old.length / 7));
  expect(purged.reduce((a, b) => a + b, 0)).toBe(old.length);
  expect(retention.purged).toBe(old.length);
  // Set-aside rows are not the outbox's to purge.
  await expect(db('outbox_poison').count({ n: '*' })).resolves.toEqual([{ n: 1 }]);

  // Nothing more to do: a second pass deletes nothing.
  await expect(retention.purgeOnce()).resolves.toBe(0);
  // A shorter retention reaches the recent rows; unpublished ones never go, whatever their age.
  await db.raw('UPDATE outbox SET created_at = NOW(3) - INTERVAL 10 DAY');
  await expect(newRetention({ retentionMs: 60 * 60_000 }).purgeOnce()).resolves.toBe(recent.length);
  expect(await remaining()).toEqual([...unpublished, ...leased]);
});

test('several instances purging at once delete each row once between them and nothing else', async () => {
  const { old, recent, unpublished, leased } = await seed();
  const instances = [newRetention(), newRetention({ batchSize: 3 }), newRetention({ batchSize: 11 })];
  const deleted = await Promise.all(instances.map((r) => r.purgeOnce()));
  expect(deleted.reduce((a, b) => a + b, 0)).toBe(old.length);
  expect(await remaining()).toEqual([...recent, ...unpublished, ...leased]);
});

test('started, it purges on its own; stop() ends it between pages', async () => {
  const { old } = await seed();
  const retention = newRetention({ batchSize: 5, pauseMs: 20 });
  retention.start();
  expect(() => retention.start()).toThrow(/starts once/);
  await waitFor('the old rows purged', () => (retention.purged === old.length ? true : undefined));
  await retention.stop();
  await retention.stop();
  expect(retention.lifecycle).toBe('STOPPED');
});

test('a page read is a range of idx_outbox_unpublished in index order, with no filesort', async () => {
  const ids = await insertCouponEvents(db, entityIds(2_000));
  await db.raw('UPDATE outbox SET published_at = NOW(3) - INTERVAL 2 DAY + INTERVAL id SECOND WHERE id <= ?', [ids[1_499]!]);
  await db.raw('ANALYZE TABLE outbox');
  const cutoff = new Date(Date.now() - DAY_MS);
  for (const [afterCursor, bindings] of [
    [false, [cutoff, 100]],
    [true, [cutoff, new Date(Date.now() - 2 * DAY_MS), new Date(Date.now() - 2 * DAY_MS), ids[10]!, 100]],
  ] as const) {
    const { access, text } = await planOf(db, purgePageSql(afterCursor), bindings);
    expect(access).toMatchObject({ access_type: 'range', key: 'idx_outbox_unpublished' });
    expect(text).not.toMatch(/filesort/);
  }
});

test('retention options are checked', () => {
  expect(() => newRetention({ retentionMs: 0 })).toThrow(/retentionMs/);
  expect(() => newRetention({ batchSize: 0 })).toThrow(/batchSize/);
});
