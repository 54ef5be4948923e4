/**
 * event_outbox retention against the real database: a pass deletes exactly the rows written
 * longer ago than the retention (and than the published watermark), page by page in id order,
 * stops at the young ones, deletes nothing while nothing is known to be published, and can run
 * on several instances at once. In a database of this file's own (no outbox connector: the
 * watermark is a fixed instant here; outbox-router.test.ts and outbox-retention-unpublished.test.ts
 * hold retention by a real connector's committed offset), emptied before each test.
 *
 * @mysql
 * @lane isolated
 */
import type { Db } from '../../../src/db/knex';
import type { OutboxWriter } from '../../../src/publish/outbox-writer';
import { OutboxRetention, OutboxRetentionOptions } from '../../../src/publish/outbox-retention';
import { EVENT_OUTBOX_PAGE_SQL } from '../../../src/publish/sql/purge-event-outbox';
import { logger } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { explainJson, FILESORT, firstTableOf } from '../../support/explain';
import { entityIds, insertCouponEvents, prefixedWriter } from './outbox-fixtures';

let testDb: TestDatabase;
let db: Db;
let write: OutboxWriter;
const DAY_MS = 86_400_000;
const retentions: OutboxRetention[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase('outbox_retention');
  db = testDb.db;
  ({ write } = await prefixedWriter(db, 'retention'));
});

beforeEach(async () => {
  await db.raw('DELETE FROM event_outbox');
});

afterEach(async () => {
  await Promise.all(retentions.splice(0).map((r) => r.loop.stop()));
});

afterAll(async () => {
  await testDb?.drop();
});

/** Every row published unless told: age alone decides. */
const ALL_PUBLISHED = async () => ({ before: new Date(Date.UTC(9999, 0)) });

function newRetention(over: Partial<OutboxRetentionOptions> = {}): OutboxRetention {
  const retention = new OutboxRetention({ db, retentionMs: DAY_MS, batchSize: 7, pauseMs: 0, intervalMs: 60_000, logger, published: ALL_PUBLISHED, ...over });
  retentions.push(retention);
  return retention;
}

/** Events written through the expirer's writer, aged by the database clock: 40 a day and more old, then 15 of 23 hours. */
async function seed(): Promise<{ old: string[]; recent: string[] }> {
  const ids = await insertCouponEvents(db, write, entityIds(40 + 15));
  const groups = { old: ids.slice(0, 40), recent: ids.slice(40) };
  // Old rows spread over a day past the cutoff, several sharing one instant.
  for (const [i, id] of groups.old.entries()) {
    await db.raw('UPDATE event_outbox SET created_at = NOW(3) - INTERVAL ? MINUTE - INTERVAL 1 DAY WHERE id = ?', [Math.floor(i / 4) * 30, id]);
  }
  // Just inside the retention: written 23 hours ago.
  await db.raw('UPDATE event_outbox SET created_at = NOW(3) - INTERVAL 23 HOUR WHERE id IN (?)', [groups.recent]);
  return groups;
}

async function remaining(): Promise<string[]> {
  return ((await db('event_outbox').orderBy('id').select('id')) as Array<{ id: number | string }>).map((r) => String(r.id));
}

test('a pass deletes exactly the rows written before now − retention, in pages, and counts them', async () => {
  const { old, recent } = await seed();
  const purged: number[] = [];
  const retention = newRetention({ observer: { purged: (n) => purged.push(n) } });

  await expect(retention.purgeOnce()).resolves.toBe(old.length);
  expect(await remaining()).toEqual(recent);
  // Pages of batchSize (7) rows until the one that reaches a young row ends the pass: 40 = 5 × 7 + 5.
  expect(purged).toEqual([7, 7, 7, 7, 7, 5]);
  expect(retention.purged).toBe(old.length);

  // Nothing more to do: a second pass deletes nothing.
  await expect(retention.purgeOnce()).resolves.toBe(0);
  // A shorter retention reaches the recent rows.
  await expect(newRetention({ retentionMs: 60 * 60_000 }).purgeOnce()).resolves.toBe(recent.length);
  expect(await remaining()).toEqual([]);
});

test('held by the published watermark: nothing goes while nothing is known to be published, and only rows older than the watermark when it is older than the retention', async () => {
  const { old, recent } = await seed();
  // An hour's retention would take every row; nothing known to be on the wire yet: none go.
  await expect(newRetention({ retentionMs: 60 * 60_000, published: async () => ({ waiting: 'no offset committed yet' }) }).purgeOnce()).resolves.toBe(0);
  expect(await remaining()).toEqual([...old, ...recent]);
  // The connector's offset stands at an event of 23.5 hours ago: the rows of 23 hours may not be on the wire yet.
  const [[{ at }]] = (await db.raw('SELECT NOW(3) - INTERVAL 1410 MINUTE AS at')) as [[{ at: Date }]];
  await expect(newRetention({ retentionMs: 60 * 60_000, published: async () => ({ before: at }) }).purgeOnce()).resolves.toBe(old.length);
  expect(await remaining()).toEqual(recent);
});

test('a pass deletes the rows written before now − retention and stops at the young ones; a row committed out of id order waits for a later pass', async () => {
  // 30 rows a day and more old, 9 young; one old row committed out of id order, among the young.
  const ids = await insertCouponEvents(db, write, entityIds(40));
  const ages = [...Array.from({ length: 30 }, (_, i) => 1_500 + 30 - i), ...Array.from({ length: 9 }, () => 10), 1_600];
  for (const [i, id] of ids.entries()) await db.raw('UPDATE event_outbox SET created_at = NOW(3) - INTERVAL ? MINUTE WHERE id = ?', [ages[i]!, id]);
  const purged: number[] = [];
  const retention = newRetention({ observer: { purged: (n) => void purged.push(n) } });
  await expect(retention.purgeOnce()).resolves.toBe(30);
  expect(purged).toEqual([7, 7, 7, 7, 2]);
  // The out-of-order old row is past the first young one: a later pass, once its page is all old, takes it.
  expect(await remaining()).toEqual(ids.slice(30));
  await db.raw('UPDATE event_outbox SET created_at = NOW(3) - INTERVAL 2 DAY WHERE id IN (?)', [ids.slice(30, 39)]);
  await expect(retention.purgeOnce()).resolves.toBe(10);
  expect(await remaining()).toEqual([]);
});

test('several instances purging at once delete each row once between them and nothing else', async () => {
  const { old, recent } = await seed();
  const instances = [newRetention(), newRetention({ batchSize: 3 }), newRetention({ batchSize: 11 })];
  const deleted = await Promise.all(instances.map((r) => r.purgeOnce()));
  expect(deleted.reduce((a, b) => a + b, 0)).toBe(old.length);
  expect(await remaining()).toEqual(recent);
});

test('started, it purges on its own; stop() ends it between pages', async () => {
  const { old } = await seed();
  const running = newRetention({ batchSize: 5, pauseMs: 20 });
  void running.loop.start();
  void running.loop.start(); // a second start does nothing
  await waitFor('the old rows purged', () => (running.purged === old.length ? true : undefined));
  await running.loop.stop();
  expect(running.loop.lifecycle).toBe('STOPPED');

  // Between pages: a pause of an hour after the first page, cut short by stop(); no second page.
  await db.raw('DELETE FROM event_outbox');
  await seed();
  const paused = newRetention({ batchSize: 5, pauseMs: 3_600_000 });
  void paused.loop.start();
  await waitFor('the first page deleted', () => (paused.purged === 5 ? true : undefined));
  await paused.loop.stop();
  await paused.loop.stop();
  expect(paused.loop.lifecycle).toBe('STOPPED');
  expect(paused.purged).toBe(5);
  expect((await remaining()).length).toBe(55 - 5);
});

test('a pass that cannot work (its table is gone) is counted and, three times in a row, turns the retention FAILED', async () => {
  const failures: string[] = [];
  await db.raw('RENAME TABLE event_outbox TO event_outbox_away');
  try {
    const retention = newRetention({ intervalMs: 1, maxBackoffMs: 1, observer: { failed: (_err, kind) => failures.push(kind) } });
    void retention.loop.start();
    await expect(retention.loop.failed()).resolves.toMatchObject({ errno: 1146 });
    expect(retention.loop.lifecycle).toBe('FAILED');
    expect(failures).toEqual(['deterministic', 'deterministic', 'deterministic']);
    expect(retention.loop.health()).toMatchObject({ ok: false, reason: expect.stringMatching(/^outbox retention FAILED: .*event_outbox/) });
  } finally {
    await db.raw('RENAME TABLE event_outbox_away TO event_outbox');
  }
});

test('a page read walks the primary key from the cursor, with no filesort', async () => {
  await insertCouponEvents(db, write, entityIds(200));
  await db.raw('ANALYZE TABLE event_outbox');
  const plan = await explainJson(db, EVENT_OUTBOX_PAGE_SQL, [new Date(), '0', 7]);
  expect(firstTableOf(plan)).toMatchObject({ key: 'PRIMARY' });
  expect(plan).not.toMatch(FILESORT);
});

test('retention options are checked', () => {
  expect(() => newRetention({ retentionMs: 0 })).toThrow(/retentionMs/);
  expect(() => newRetention({ batchSize: 0 })).toThrow(/batchSize/);
});
