/**
 * Digests through the real stack (docs/reminders.md): a fire point 4 s before the due time, a
 * 2 s window, on second-wide buckets. The reminders of one user whose fire points fall in one
 * window are one USER_COUPONS_EXPIRING_SOON, made where the window's bucket is released (the
 * entries keyed by the user's shard), listing what the user's index finds at its commit. A
 * replay of the window's bucket writes nothing new.
 *
 * @mysql
 * @lane isolated
 */
import { parseEntityFile } from '../../../src/core/entity-file';
import { replayCommand } from '../../../src/cli/replay-run';
import { collectEvents, SeenEvent } from '../../support/events';
import { outboxKeys } from '../../support/outbox-rows';
import { logger } from '../../support/stack';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import type { TestPipeline } from '../../support/pipeline';
import type { TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { remindingFile } from '../../unit/reminders/reminder-files';
import { DIGEST_PART_ITEMS } from '../../../src/core/events';

const WINDOW = 2_000;
const BEFORE = 4_000;
const entities = remindingFile('digest', { before: ['4s'], window: '2s' });
const catalogue = parseEntityFile(entities, 'digests.json');

let own: OwnDatabasePipeline;
let database: TestDatabase;
let pipeline: TestPipeline;
let events: { events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> };

const digests = () => events.events.filter((e) => e.headers['event_type'] === 'USER_COUPONS_EXPIRING_SOON');
const n = (v: unknown) => Number(v);

async function dbNow(): Promise<number> {
  const [rows] = (await database.db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>];
  return rows[0]!.now.getTime();
}

beforeAll(async () => {
  own = await ownDatabasePipeline('digests', entities);
  ({ database, pipeline } = own);
  events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  await pipeline.start();
});

afterAll(async () => {
  await events?.stop();
  await own?.stop();
});

test('one digest per user and window, listing the coupons still ACTIVE; a replay of the bucket writes nothing new', async () => {
  // A window starting at least 3 s from now, so every row is scheduled before it begins.
  const windowStart = Math.ceil(((await dbNow()) + 3_000) / WINDOW) * WINDOW;
  const due = (k: number) => new Date(windowStart + BEFORE + 100 + k * 300);
  const insert = async (user: number, k: number, face = '5.00') => {
    const [id] = await database.db('coupons').insert({ user_id: user, status: 'ACTIVE', expire_time: due(k), face_value: face });
    return id!;
  };
  const alice = [await insert(1001, 0), await insert(1001, 1), await insert(1001, 2), await insert(1001, 3), await insert(1001, 4)];
  const bob = [await insert(1002, 1, '50.00'), await insert(1002, 5)];
  // Used before the window: not listed.
  const aliceUsed = await insert(1001, 2);
  await database.db('coupons').where({ id: aliceUsed }).update({ status: 'USED' });
  // In the next window: a digest of its own, later.
  await database.db('coupons').insert({ user_id: 1001, status: 'ACTIVE', expire_time: new Date(windowStart + WINDOW + BEFORE + 100), face_value: '5.00' });

  await waitFor('both users’ digests of the window, and the next one', () => (digests().length >= 3 ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  const ofWindow = digests().filter((d) => n(d.value['window_start']) === windowStart);
  expect(ofWindow.map((d) => d.key).sort()).toEqual(['1001', '1002']);
  const items = (user: string) => (ofWindow.find((d) => d.key === user)!.value['items'] as Array<Record<string, unknown>>).map((i) => n(i['coupon_id']));
  expect(items('1001')).toEqual(alice);
  expect(items('1002')).toEqual(bob);
  for (const d of ofWindow) {
    expect(d.headers['event_key']).toBe(`coupon-expired-digest-${d.key}-${BEFORE}-${windowStart}-1`);
    expect(n(d.value['remind_before_ms'])).toBe(BEFORE);
    // Sent at the window's start by the database clock, before any coupon it lists is due.
    expect(n(d.value['occurred_at'])).toBeGreaterThanOrEqual(windowStart);
    const items = d.value['items'] as Array<Record<string, unknown>>;
    for (const i of items) expect(n(i['due_at'])).toBeGreaterThan(n(d.value['occurred_at']));
  }
  expect(
    digests()
      .filter((d) => n(d.value['window_start']) === windowStart + WINDOW)
      .map((d) => d.key),
  ).toEqual(['1001']);

  const sizes = await pipeline.metrics.digestSize.get();
  expect(sizes.values.find((v) => v.metricName === 'timebucket_reminder_digest_rows_sum')?.value).toBe(5 + 2 + 1);

  // The bucket replayed: the same keys, so nothing new in the outbox.
  // Only the digests: the coupons start expiring while the replay runs.
  const digestKeys = async () => (await outboxKeys(database.db, catalogue)).filter((k) => k.includes('-digest-')).sort();
  const before = await digestKeys();
  const { summary } = await (async () => {
    const lines: string[] = [];
    const progress = { start: () => undefined, update: () => undefined, stop: () => undefined };
    return {
      summary: await replayCommand(
        pipeline.config,
        pipeline.topology,
        pipeline.catalogue,
        logger,
        { atMs: windowStart, dryRun: false, json: false },
        { print: (l) => lines.push(l), progress },
      ),
    };
  })();
  expect(summary.counts.reminders).toBeGreaterThanOrEqual(7);
  expect(await digestKeys()).toEqual(before);
  expect(before).toHaveLength(3);
  expect(events.undecodable).toEqual([]);
});

test('a user with more coupons in a window than a digest holds gets parts: 500 items each, in order, each part its own key', async () => {
  const windowStart = Math.ceil(((await dbNow()) + 4_000) / WINDOW) * WINDOW;
  const user = 3001;
  const count = DIGEST_PART_ITEMS * 2 + 50;
  // One statement: every coupon due in the window's range, ids in due order.
  const rows = Array.from({ length: count }, (_, i) => ({
    user_id: user,
    status: 'ACTIVE',
    expire_time: new Date(windowStart + BEFORE + 100 + Math.floor((i * 1_500) / count)),
    face_value: '1.00',
  }));
  const [first] = await database.db('coupons').insert(rows);
  const ids = rows.map((_, i) => first! + i);

  const parts = () => digests().filter((d) => d.key === String(user) && n(d.value['window_start']) === windowStart);
  await waitFor('the three parts of the user’s digest', () => (parts().length >= 3 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200 });
  const byPart = [...parts()].sort((a, b) => n(a.value['part']) - n(b.value['part']));
  expect(byPart.map((d) => [d.headers['event_key'], n(d.value['part']), n(d.value['parts'])])).toEqual(
    [1, 2, 3].map((part) => [`coupon-expired-digest-${user}-${BEFORE}-${windowStart}-${part}`, part, 3]),
  );
  const listed = byPart.map((d) => (d.value['items'] as Array<Record<string, unknown>>).map((i) => n(i['coupon_id'])));
  expect(listed.map((items) => items.length)).toEqual([DIGEST_PART_ITEMS, DIGEST_PART_ITEMS, 50]);
  expect(listed.flat()).toEqual(ids);
  expect(events.undecodable).toEqual([]);
});
