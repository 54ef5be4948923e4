/**
 * The outbox gauges' read against the real database: bounded however large the backlog, exact
 * below the cap, the age of the row waiting longest. In a database of this file's own.
 *
 * @lane isolated
 */
import type { Db } from '../../../src/db/knex';
import { readOutboxBacklog } from '../../../src/publish/sql/outbox-backlog';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { entityIds, insertCouponEvents, readNext } from './outbox-fixtures';

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase('outbox_backlog');
  db = testDb.db;
});

afterAll(async () => {
  await testDb?.drop();
});

test('an empty outbox: no backlog, age 0, nothing set aside', async () => {
  await expect(readOutboxBacklog(db)).resolves.toEqual({ rows: 0, oldestAgeSeconds: 0, poisonRows: 0 });
});

test('a scrape reads at most the cap of index entries; below the cap the count is exact', async () => {
  const ids = await insertCouponEvents(db, entityIds(3_000));
  await db.raw('UPDATE outbox SET published_at = NOW(3) WHERE id <= ?', [ids[499]!]);
  // The first unpublished row has waited an hour; the gauge must say so, not the age of the newest.
  await db.raw('UPDATE outbox SET created_at = NOW(3) - INTERVAL 1 HOUR WHERE id = ?', [ids[500]!]);
  await db('outbox_poison').insert([1, 2, 3].map((id) => ({
    id,
    event_key: `coupon-expired-${id}-0`,
    event_type: 'COUPON_EXPIRED',
    entity_type: 'coupon',
    entity_id: id,
    payload: '{',
    created_at: new Date(),
    reason: 'not JSON',
    set_aside_by: 'loop-a',
  })));

  const exact = await readOutboxBacklog(db);
  expect(exact).toMatchObject({ rows: 2_500, poisonRows: 3 });
  expect(exact.oldestAgeSeconds).toBeGreaterThanOrEqual(3_600);
  expect(exact.oldestAgeSeconds).toBeLessThan(3_600 + 600);

  // Capped: 1000 means "at least 1000", and no more than ~1000 entries were read for it (the
  // unbounded COUNT(*) read all 2500, and a million for a million-row backlog).
  const { backlog, entries } = await db.transaction(async (trx) => {
    const before = await readNext(trx);
    const read = await readOutboxBacklog(trx, 1_000);
    return { backlog: read, entries: (await readNext(trx)) - before };
  });
  expect(backlog).toMatchObject({ rows: 1_000, poisonRows: 3 });
  expect(entries).toBeLessThan(1_100);
});
