/**
 * The topology file changed under entries in flight (docs/operations.md, "Changing the
 * topology"): a pipeline of one topology routes coupons into its rings and stops; a pipeline of
 * the changed topology, on the same topics and groups, must expire every one of them on time:
 * none dead-lettered, none early, one outbox row each. Entries keyed by the old shard count are
 * held where they are (core/held-record.ts); entries a resized ring no longer places are routed
 * again.
 *
 * @lane captured-2
 */
import { createDb, Db } from '../../../src/db/knex';
import { shardOf } from '../../../src/core/router';
import { config } from '../../support/stack';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, RawTopology, TestPipeline } from '../../support/pipeline';
import { waitFor } from '../../support/wait-for';
import { defaultCatalogue } from '../../support/catalogue';
import { countInStatus, metricSum } from '../../support/counts';
import { insertDueCoupons } from '../../support/due-coupons';

let db: Db;
const pipelines: TestPipeline[] = [];
const marker = 2_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

beforeAll(() => {
  db = createDb(config.db);
});

afterEach(async () => {
  await Promise.all(pipelines.splice(0).map((p) => p.stopAll()));
});

afterAll(async () => {
  await db.destroy();
});

const insertCoupons = (count: number, fromMs: number, spreadMs: number) => insertDueCoupons(db, marker, count, fromMs, spreadMs);

/**
 * Routes coupons with `before`'s topology (its repartitioner only, stopped once every one is
 * written), then runs the stream roles of `after`'s; returns the coupons and when the second
 * pipeline was running. Coupons due within the finest horizon land in the minute ring, later
 * ones in the hour ring, and a few are already due (the due lane).
 */
async function routeThenChange(
  after: (raw: RawTopology) => void,
  beforeInsert?: () => Promise<unknown>,
): Promise<{ ids: number[]; switchedAt: number; next: TestPipeline }> {
  const first = await createTestPipeline();
  pipelines.push(first);
  await first.start(['repartitioner']);
  await beforeInsert?.();
  const ids = [...(await insertCoupons(10, -1_000, 500)), ...(await insertCoupons(40, 5_000, 2_000)), ...(await insertCoupons(20, 11_000, 2_000))];
  await waitFor('the first pipeline to route every coupon', async () => ((await metricSum(first.metrics.routed)) >= ids.length ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  expect(await metricSum(first.metrics.routed, { lane: 'minute' })).toBeGreaterThan(0);
  expect(await metricSum(first.metrics.routed, { lane: 'hour' })).toBeGreaterThan(0);
  expect(await metricSum(first.metrics.routed, { lane: 'due' })).toBe(10);
  await first.stopAll();

  const next = await createTestPipeline({ prefix: first.topology.prefix, editTopology: after });
  pipelines.push(next);
  await next.start();
  return { ids, switchedAt: Date.now(), next };
}

/** Every coupon expired, none before its time, none later than the switch allows; one event each; no dead letter. */
async function expectAllExpiredOnTime(ids: number[], switchedAt: number, next: TestPipeline): Promise<void> {
  await waitFor(
    'every coupon expired',
    async () => {
      return (await countInStatus(db, 'coupons', 'EXPIRED', ids)) === ids.length ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const rows = (await db('coupons').whereIn('id', ids).select('id', 'expire_time', 'expired_at')) as Array<{ id: number; expire_time: Date; expired_at: Date }>;
  // "On time where it was written": an entry the new topology failed to place or hold would wait
  // for a lap of its ring to come round (the minute ring: ring × width, 12 s here) or be lost.
  // Less than a lap after the later of its due time and the switch is that behaviour, with the
  // lap itself as the margin a loaded machine has; how late within it is speed (`make bench`).
  const lapMs = Math.min(...next.topology.tiers.map((t) => t.ring * t.widthMs));
  const late = rows.filter((r) => r.expired_at.getTime() >= Math.max(r.expire_time.getTime(), switchedAt) + lapMs);
  expect(late).toEqual([]);
  expect(rows.filter((r) => r.expired_at < r.expire_time)).toEqual([]);
  expect(await outboxCount(db, defaultCatalogue, { entity: 'coupon', ids })).toEqual({ rows: ids.length, keys: ids.length });
  expect(await metricSum(next.metrics.deadLetters)).toBe(0);
}

test('shards 4 → 8 and the minute and due partitions 4 → 8 under entries in flight: each expires on time where it was written', async () => {
  const { ids, switchedAt, next } = await routeThenChange((raw) => {
    raw.shards = 8;
    raw.tiers[0]!.partitions = 8;
    raw.due.partitions = 8;
  });
  // The point of the test: about half the entries in flight are keyed by a shard that is not theirs now.
  expect(ids.filter((id) => shardOf(String(id), 4) !== shardOf(String(id), 8)).length).toBeGreaterThan(10);
  await expectAllExpiredOnTime(ids, switchedAt, next);
  // Held in place, not routed again.
  expect(await metricSum(next.metrics.rerouted)).toBe(0);
});

/**
 * A second-wide bucket k sits in ring topic k mod 12, and a ring of 16 reads it from k mod 16:
 * the same topic for k mod 48 below 12. Waits (at most 16 s) until the seconds the minute-ring
 * coupons fall in (5 to 8 s from now) are all ones the two rings place apart, so that the resized
 * ring has entries to route again whatever the clock said when the test began.
 */
const ringsDisagree = () =>
  waitFor(
    'the coming seconds placed apart by rings of 12 and 16',
    () => {
      const first = Math.floor((Date.now() + 5_000) / 1_000);
      return [0, 1, 2, 3].every((i) => (first + i) % 12 !== (first + i) % 16) ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50 },
  );

test('the minute ring resized 12 → 16 under entries in flight: the entries it no longer places are routed again and expire on time', async () => {
  const { ids, switchedAt, next } = await routeThenChange((raw) => {
    raw.tiers[0]!.ring = 16;
  }, ringsDisagree);
  await expectAllExpiredOnTime(ids, switchedAt, next);
  expect(await metricSum(next.metrics.rerouted, { stage: 'expirer' })).toBeGreaterThan(0);
});
