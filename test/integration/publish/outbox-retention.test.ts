/**
 * Outbox retention against the real database: a pass deletes exactly the rows published longer
 * ago than the retention, page by page in index order, leaves unpublished, recently published
 * and set-aside rows alone, and can run on several instances at once. In a database of this
 * file's own, emptied before each test.
 *
 * @lane isolated
 */
import type { Db } from '../../../src/db/knex';
import { OutboxRetention, OutboxRetentionOptions } from '../../../src/publish/outbox-retention';
import { purgePageSql } from '../../../src/publish/sql/purge-published-outbox';
import { EVENT_OUTBOX_PAGE_SQL, purgeEventOutboxPage } from '../../../src/publish/sql/purge-event-outbox';
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
  // Pages of batchSize (7) rows until the last, short one ends the pass: 40 = 5 × 7 + 5.
  expect(purged).toEqual([7, 7, 7, 7, 7, 5]);
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
  const running = newRetention({ batchSize: 5, pauseMs: 20 });
  running.start();
  running.start(); // a second start does nothing
  await waitFor('the old rows purged', () => (running.purged === old.length ? true : undefined));
  await running.stop();
  expect(running.lifecycle).toBe('STOPPED');

  // Between pages: a pause of an hour after the first page, cut short by stop(); no second page.
  await db.raw('DELETE FROM outbox');
  await db.raw('DELETE FROM outbox_poison');
  await seed();
  const paused = newRetention({ batchSize: 5, pauseMs: 3_600_000 });
  paused.start();
  await waitFor('the first page deleted', () => (paused.purged === 5 ? true : undefined));
  await paused.stop();
  await paused.stop();
  expect(paused.lifecycle).toBe('STOPPED');
  expect(paused.purged).toBe(5);
  expect((await remaining()).length).toBe(70 - 5);
});

test('a pass that cannot work (its table is gone) is counted and, three times in a row, turns the retention FAILED', async () => {
  const failures: string[] = [];
  const retention = newRetention({ intervalMs: 1, maxBackoffMs: 1, purgePage: async () => db.raw('SELECT * FROM no_such_outbox').then(() => ({ deleted: 0, next: null, full: false })), observer: { failed: (_err, kind) => failures.push(kind) } });
  retention.start();
  await expect(retention.failed()).resolves.toMatchObject({ errno: 1146 });
  expect(retention.lifecycle).toBe('FAILED');
  expect(failures).toEqual(['deterministic', 'deterministic', 'deterministic']);
  expect(retention.health()).toMatchObject({ ok: false, reason: expect.stringMatching(/^outbox retention FAILED: .*no_such_outbox/) });
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

describe('event_outbox (router mode)', () => {
  /** `n` rows written `agesMinutes[i]` minutes ago (by the database clock), in id order. */
  async function seedEvents(agesMinutes: readonly number[]): Promise<string[]> {
    await db.raw('DELETE FROM event_outbox');
    const ids: string[] = [];
    for (const [i, age] of agesMinutes.entries()) {
      const [result] = (await db.raw(
        `INSERT INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload, created_at)
         VALUES (?, 't', ?, 'COUPON_EXPIRED', 'x', '2031-01-01T00:00:00.000Z', 'y', ?, NOW(3) - INTERVAL ? MINUTE)`,
        [`k-${i}`, String(i), Buffer.from([0, 0, 0, 0, 1]), age],
      )) as [{ insertId: number }];
      ids.push(String(result.insertId));
    }
    return ids;
  }

  test('a pass deletes the rows written before now − retention, page by page, and stops at the young ones', async () => {
    // 30 rows a day and more old, 9 young; one old row committed out of id order, among the young.
    const ages = [...Array.from({ length: 30 }, (_, i) => 1_500 + 30 - i), ...Array.from({ length: 9 }, () => 10), 1_600];
    const ids = await seedEvents(ages);
    const purged: number[] = [];
    const retention = new OutboxRetention<{ id: string }>({ db, purgePage: purgeEventOutboxPage, retentionMs: DAY_MS, batchSize: 7, pauseMs: 0, intervalMs: 60_000, logger, observer: { purged: (n) => void purged.push(n) } });
    await expect(retention.purgeOnce()).resolves.toBe(30);
    expect(purged).toEqual([7, 7, 7, 7, 2]);
    const left = (await db('event_outbox').select('id').orderBy('id')).map((r: { id: number }) => String(r.id));
    // The out-of-order old row is past the first young one: a later pass, once its page is all old, takes it.
    expect(left).toEqual(ids.slice(30));
  });

  test('a page read walks the primary key from the cursor, with no filesort', async () => {
    const [rows] = (await db.raw(`EXPLAIN ${EVENT_OUTBOX_PAGE_SQL}`, [new Date(), '0', 7])) as [Array<{ key: string | null; Extra: string | null }>];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).toBe('PRIMARY');
    expect(rows[0]!.Extra ?? '').not.toMatch(/filesort/);
  });
});
