/**
 * Reminders through the real stack (docs/reminders.md): fire points 3 s, 2 s and 1 s before a
 * coupon's expire_time on second-wide buckets, from rows written with mysql2 through Debezium,
 * the rings and the expirer's reminder transaction to COUPON_EXPIRING_SOON on its topic.
 *
 * A database of the test's own (its coupons table migrated), captured by a connector of its own
 * as `timebucket connector config` generates it for this entities file, published by the outbox
 * router; schemas derived from the columns.
 *
 * @mysql
 * @lane isolated
 */
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { effectiveViewSql } from '../../../src/db/sql/effective-view';
import { collectEvents, SeenEvent } from '../../support/events';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import type { TestPipeline } from '../../support/pipeline';
import type { TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { remindingFile } from '../../unit/reminders/reminder-files';

const entities = remindingFile('single', { before: ['3s', '2s', '1s'] });
const catalogue = parseEntityFile(entities, 'reminders.json');

let own: OwnDatabasePipeline;
let database: TestDatabase;
let pipeline: TestPipeline;
let events: { events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> };

const reminders = (id: number) => events.events.filter((e) => e.headers['event_type'] === 'COUPON_EXPIRING_SOON' && e.key === String(id));
const expired = (id: number) => events.events.filter((e) => e.headers['event_type'] === 'COUPON_EXPIRED' && e.key === String(id));
const n = (v: unknown) => Number(v);

async function dbNow(): Promise<number> {
  const [rows] = (await database.db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>];
  return rows[0]!.now.getTime();
}

async function insertCoupon(dueAtMs: number, status = 'ACTIVE'): Promise<number> {
  const [id] = await database.db('coupons').insert({ user_id: 4242, status, expire_time: new Date(dueAtMs), face_value: '5.00' });
  return id!;
}

beforeAll(async () => {
  own = await ownDatabasePipeline('reminders', entities);
  ({ database, pipeline } = own);
  events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  await pipeline.start();
  const coupon = entityOf(catalogue, 'coupon');
  await database.db.raw(effectiveViewSql(coupon, coupon.locations[0]!, new Map([['expired', 'datetime']])));
});

afterAll(async () => {
  await events?.stop();
  await own?.stop();
});

test('each fire point once, in order, before the expiry; a moved due time, a used coupon and a late-issued coupon', async () => {
  const now = await dbNow();
  const plain = await insertCoupon(now + 8_000);
  const moved = await insertCoupon(now + 8_000);
  const used = await insertCoupon(now + 8_000);
  // Issued after its 3 s fire point. MariaDB's binlog times are whole seconds, so "when the row
  // appeared" is known to the second (its last millisecond is taken): the insert goes in at
  // 550-750 ms into a second S, due at S + 3.5 s, so its 3 s fire point (S + 0.5 s) has passed
  // and its 2 s one (S + 1.5 s) is after the second's end.
  const second = await waitFor(
    'the database clock 550-750 ms into a second',
    async () => {
      const t = await dbNow();
      return t % 1000 >= 550 && t % 1000 <= 750 ? t - (t % 1000) : undefined;
    },
    { timeoutMs: 3_000, intervalMs: 10 },
  );
  const late = await insertCoupon(second + 3_500);
  // Before any of their fire points (the first is 5 s away).
  const movedDue = now + 14_000;
  await database
    .db('coupons')
    .where({ id: moved })
    .update({ expire_time: new Date(movedDue) });
  await database.db('coupons').where({ id: used }).update({ status: 'USED' });

  await waitFor('every coupon expired', () => ([plain, moved, late].every((id) => expired(id).length > 0) ? true : undefined), {
    timeoutMs: 40_000,
    intervalMs: 200,
  });
  // Reminders are published on their own topic: no order with the expiries' across topics.
  // The late coupon's 2 s fire point may be superseded: its change can reach the rings after that
  // point, whose entry then goes to the due topic while the 1 s one waits on a ring; read after
  // the 1 s point has passed, it is skipped rather than published after it.
  const superseded = async () => (await pipeline.metrics.remindersSkipped.get()).values.find((v) => v.labels['reason'] === 'superseded')?.value ?? 0;
  await waitFor(
    'the reminders published',
    async () => (reminders(plain).length + reminders(moved).length + reminders(late).length + (await superseded()) >= 8 ? true : undefined),
    { timeoutMs: 20_000, intervalMs: 200 },
  );

  const sent = (id: number) => reminders(id).map((e) => n(e.value['remind_before_ms']));
  expect(sent(plain)).toEqual([3_000, 2_000, 1_000]);
  expect(sent(moved)).toEqual([3_000, 2_000, 1_000]);
  expect([[2_000, 1_000], [1_000]]).toContainEqual(sent(late));
  expect(await superseded()).toBe(2 - sent(late).length);
  expect(sent(used)).toEqual([]);

  for (const id of [plain, moved, late]) {
    const expiry = expired(id)[0]!;
    const due = n(expiry.value['due_at']);
    for (const r of reminders(id)) {
      // For the due time the row has, never before its fire point, never after the next one (the
      // due time for the last) by the database clock.
      const before = n(r.value['remind_before_ms']);
      expect(n(r.value['due_at'])).toBe(due);
      expect(n(r.value['occurred_at'])).toBeGreaterThanOrEqual(due - before);
      expect(n(r.value['occurred_at'])).toBeLessThan(due - (before - 1_000));
      expect(n(r.value['occurred_at'])).toBeLessThanOrEqual(n(expiry.value['occurred_at']));
      expect(r.headers['event_key']).toBe(`coupon-expired-remind-${id}-${due}-${n(r.value['remind_before_ms'])}`);
    }
    const times = reminders(id).map((r) => n(r.value['occurred_at']));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  }
  expect(n(expired(moved)[0]!.value['due_at'])).toBe(movedDue);

  // What the expirer counted, by reason: the used coupon's three (no longer expirable), the moved
  // coupon's first three (moved); the late coupon's past fire point was skipped before it was scheduled.
  const skipped = await pipeline.metrics.remindersSkipped.get();
  const byReason = Object.fromEntries(skipped.values.map((v) => [v.labels['reason'], v.value]));
  expect(byReason).toMatchObject({ not_expirable: 3, moved: 3, past: 1 });
  const sentTotal = (await pipeline.metrics.remindersSent.get()).values.reduce((s, v) => s + v.value, 0);
  expect(sentTotal).toBe(6 + sent(late).length);
  expect(events.undecodable).toEqual([]);

  // The stream has caught up: what a reader of the effective view sees is what the table holds.
  const [viewRows] = (await database.db.raw('SELECT id, status, effective_status FROM coupons_effective')) as [
    Array<{ status: string; effective_status: string }>,
  ];
  expect(viewRows).toHaveLength(4);
  expect(viewRows.map((r) => r.effective_status)).toEqual(viewRows.map((r) => r.status));
});
