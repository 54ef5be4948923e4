/**
 * The effective view (`timebucket sql effective-view`, db/effective-view.ts) on the real
 * server: a due coupon still ACTIVE reads EXPIRED to the millisecond, before any expiry runs and
 * whatever the reader's session time zone; once the expiry transaction has moved the rows, the
 * view and the table agree on every row.
 *
 * @mysql
 * @lane isolated
 */
import { entityOf, transitionOf } from '../../../src/core/entity-catalogue';
import { effectiveViewSql } from '../../../src/db/effective-view';
import type { OutboxWriter } from '../../../src/expire/outbox-writer';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { defaultCatalogue } from '../../support/catalogue';
import { eventWriter } from '../../support/event-writer';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let database: TestDatabase;
let outbox: OutboxWriter;
const coupon = entityOf(defaultCatalogue, 'coupon');

beforeAll(async () => {
  database = await createTestDatabase('effective-view');
  await database.db.raw(effectiveViewSql(coupon, coupon.locations[0]!, new Map([['expired', 'datetime']])));
  outbox = await eventWriter(database.db, defaultCatalogue);
});

afterAll(async () => {
  await database?.drop();
});

type Row = { id: number; status: string; effective_status: string };

async function view(timeZone = '+00:00'): Promise<Row[]> {
  // One connection, its session zone set first: the view must not depend on it.
  return database.db.transaction(async (trx) => {
    await trx.raw('SET time_zone = ?', [timeZone]);
    const [rows] = (await trx.raw('SELECT id, status, effective_status FROM coupons_effective ORDER BY id')) as [Row[]];
    // The pool's connections keep their session zone: give this one back as the pool set it.
    await trx.raw("SET time_zone = '+00:00'");
    return rows;
  });
}

test('EXPIRED before the stream gets to it, for a due ACTIVE row only; equal to the table once it has', async () => {
  const db = database.db;
  const [now] = ((await db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>])[0];
  const at = (ms: number) => new Date(now!.now.getTime() + ms);
  const insert = async (status: string, dueInMs: number) => (await db('coupons').insert({ user_id: 1, status, expire_time: at(dueInMs) }))[0]!;
  const due = await insert('ACTIVE', -1);
  const notYet = await insert('ACTIVE', 600_000);
  const used = await insert('USED', -60_000);
  const locked = await insert('LOCKED', -60_000);

  const expected = [
    { id: due, status: 'ACTIVE', effective_status: 'EXPIRED' },
    { id: notYet, status: 'ACTIVE', effective_status: 'ACTIVE' },
    { id: used, status: 'USED', effective_status: 'USED' },
    { id: locked, status: 'LOCKED', effective_status: 'LOCKED' },
  ];
  expect(await view()).toEqual(expected);
  expect(await view('+08:00')).toEqual(expected);
  expect(await view('-07:00')).toEqual(expected);

  const batches = createTransitionBatches(db, defaultCatalogue, { outbox });
  const outcome = await batches.run(transitionOf(defaultCatalogue, 'coupon', 'expired'), [due, notYet, used, locked].map((id, i) => ({ id: String(id), expireAtMs: at([-1, 600_000, -60_000, -60_000][i]!).getTime() })), 'scanner');
  expect(outcome.transitioned.map((t) => t.id)).toEqual([String(due)]);
  const caughtUp = await view();
  expect(caughtUp.map((r) => r.effective_status)).toEqual(caughtUp.map((r) => r.status));
  expect(caughtUp.find((r) => r.id === due)).toEqual({ id: due, status: 'EXPIRED', effective_status: 'EXPIRED' });
});
