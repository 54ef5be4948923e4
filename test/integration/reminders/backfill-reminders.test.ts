/**
 * Rows that existed before timebucket get their reminders from `timebucket backfill`, as the
 * repartitioner would have scheduled them from the rows' changes: each fire point still ahead
 * when backfill reads the row, digests keyed by the user, past ones skipped (never sent late).
 * No repartitioner runs, so every entry here comes from backfill.
 *
 * Fire points: a digest 6 s before the due time (2 s windows), one reminder per coupon 3 s before.
 *
 * @lane isolated
 */
import { spawnCli } from '../../support/cli';
import { collectEvents, SeenEvent } from '../../support/events';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import type { TestPipeline } from '../../support/pipeline';
import type { TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { remindingFile } from '../../unit/reminders/reminder-files';

const entities = remindingFile('single', { before: ['6s', '3s'] });
const digest = remindingFile('digest').entities[0]!.transitions[0]!.reminders!['digest'] as Record<string, unknown>;
entities.entities[0]!.transitions[0]!.reminders!['digest'] = { ...digest, before: ['6s'], window: '2s' };

let own: OwnDatabasePipeline;
let database: TestDatabase;
let pipeline: TestPipeline;
let events: { events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> };

const ofType = (type: string) => events.events.filter((e) => e.headers['event_type'] === type);
const n = (v: unknown) => Number(v);

async function dbNow(): Promise<number> {
  const [rows] = (await database.db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>];
  return rows[0]!.now.getTime();
}

async function insertCoupon(userId: number, dueAtMs: number): Promise<number> {
  const [id] = await database.db('coupons').insert({ user_id: userId, status: 'ACTIVE', expire_time: new Date(dueAtMs), face_value: '5.00' });
  return id!;
}

beforeAll(async () => {
  own = await ownDatabasePipeline('backfill_reminders', entities);
  ({ database, pipeline } = own);
  events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  await pipeline.start(['expirer', 'cascader']);
});

afterAll(async () => {
  await events?.stop();
  await own?.stop();
});

test('backfill schedules the fire points still ahead: one digest per user, a reminder per coupon, none for a coupon whose fire points have passed', async () => {
  const now = await dbNow();
  const due = now + 18_000;
  const alice = [await insertCoupon(7001, due), await insertCoupon(7001, due), await insertCoupon(7001, due)];
  const bob = await insertCoupon(7002, due);
  const soon = await insertCoupon(7003, now + 2_500);

  const run = spawnCli(['backfill', '--json'], pipeline.env);
  const { code } = await run.exited;
  expect([code, run.stderr()]).toEqual([0, expect.any(String)]);
  const summary = JSON.parse(run.stdout()) as { complete: boolean; entities: Array<{ entity: string; read: number; routed: number; reminders: number }> };
  // Four coupons × two fire points; the fifth's are past (it is due in 2.5 s).
  expect(summary.entities).toEqual([expect.objectContaining({ entity: 'coupon', read: 5, routed: 5, reminders: 8 })]);

  const couponIds = [...alice, bob, soon];
  await waitFor('every coupon expired', () => (new Set(ofType('COUPON_EXPIRED').map((e) => e.key)).size === couponIds.length ? true : undefined), {
    timeoutMs: 40_000,
    intervalMs: 200,
  });
  await waitFor(
    'the reminders and digests published',
    () => (ofType('COUPON_EXPIRING_SOON').length >= 4 && ofType('USER_COUPONS_EXPIRING_SOON').length >= 2 ? true : undefined),
    {
      timeoutMs: 20_000,
      intervalMs: 200,
    },
  );

  const digests = ofType('USER_COUPONS_EXPIRING_SOON');
  expect(digests.map((d) => d.key).sort()).toEqual(['7001', '7002']);
  const listed = (user: string) => (digests.find((d) => d.key === user)!.value['items'] as Array<{ coupon_id: unknown }>).map((i) => n(i.coupon_id));
  expect(listed('7001')).toEqual(alice);
  expect(listed('7002')).toEqual([bob]);
  const reminders = ofType('COUPON_EXPIRING_SOON');
  expect(reminders.map((r) => n(r.key)).sort((a, b) => a - b)).toEqual([...alice, bob]);
  // Before the due time by the database clock, never before the fire point.
  for (const r of reminders) {
    expect(n(r.value['occurred_at'])).toBeGreaterThanOrEqual(n(r.value['due_at']) - 3_000);
    expect(n(r.value['occurred_at'])).toBeLessThan(n(r.value['due_at']));
  }
  for (const d of digests) expect(n(d.value['occurred_at'])).toBeLessThan(due);
  expect(events.undecodable).toEqual([]);
});
