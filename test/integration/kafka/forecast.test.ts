/**
 * `forecast` on a real broker: bucket entries written into the rings of a topology with
 * second-wide tiers (as the repartitioner writes them, at its clock), then the forecast read
 * from offsets alone counts, per tier and bucket, exactly the entries written there, the
 * released ones as released; the command prints the same as a chart and as JSON, and the
 * cascader role's metrics carry it. Then the hold stages run: once every bucket has passed and its entries are done (their rows do not exist,
 * so they transition nothing), every count is 0. Then rows scheduled through the capture, some
 * paid and some extended after: the forecast keeps counting their first entries (an upper
 * bound of the work: the database finds them stale) beside the extended rows' new ones.
 *
 * @lane isolated
 */
import { bucketRecord, byTopic, type BucketRecord } from '../../../src/core/bucket-record';
import { forecastOf } from '../../../src/core/forecast';
import { route } from '../../../src/core/router';
import { systemClock } from '../../../src/core/clock';
import { createKafka } from '../../../src/kafka/client';
import { readForecast } from '../../../src/kafka/read-forecast';
import type { Forecast } from '../../../src/core/forecast';
import { spawnCli } from '../../support/cli';
import { createTestPipeline, type TestPipeline } from '../../support/pipeline';
import { logger } from '../../support/stack';
import { waitFor } from '../../support/wait-for';
import type { Admin } from 'kafkajs';
import { createDb } from '../../../src/db/knex';

let pipeline: TestPipeline;
let admin: Admin;

beforeAll(async () => {
  // The cascader's forecast metrics twice a second, so the test need not wait 15 s for them.
  pipeline = await createTestPipeline({ env: { TB_FORECAST_INTERVAL_MS: '500' } });
  admin = createKafka(pipeline.config.kafka, logger, '-test-forecast').admin();
  await admin.connect();
});

afterAll(async () => {
  await pipeline?.stopAll();
  await admin?.disconnect();
});

/** Ids no row has: the expirer finds nothing to transition, and commits. */
const ID_BASE = 9_100_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1_000;

/** The entries held per (topic, bucket start) among `records`. */
function heldPerBucket(records: readonly BucketRecord[]): Map<string, number> {
  const held = new Map<string, number>();
  for (const r of records) {
    const key = `${r.topic}@${r.headers['bucket_start']}`;
    held.set(key, (held.get(key) ?? 0) + 1);
  }
  return held;
}

function forecastPerBucket(f: Forecast): Map<string, number> {
  return new Map(f.tiers.flatMap((t) => t.buckets.filter((b) => b.entries > 0).map((b) => [`${b.topic}@${b.bucketStartMs}`, b.entries] as const)));
}

test('counts per bucket equal the entries written there, per tier; the command prints them; once the buckets pass, every count is 0', async () => {
  const { topology, catalogue } = pipeline;
  const now = systemClock.now();
  // A hot second (40 entries) 8 s ahead, a few 4 s ahead in the minute ring; 14 s ahead (the hour
  // ring: the minute ring reaches 9 s); 40 s ahead (the day ring: the hour ring reaches 24 s).
  // Each bucket stays in the forecast's window until its tier's guard (3 s for the minute ring)
  // after it started: the earliest some 7 s after they are written, which the read below needs
  // only a fraction of, however loaded the machine.
  const dueIn = [...Array<number>(40).fill(8_000), 4_000, 4_000, 4_100, 14_000, 14_500, 40_000];
  const records = dueIn.map((ms, n) =>
    bucketRecord(topology, catalogue, { entity: 'coupon', transition: 'expired', id: String(ID_BASE + n), expireAtMs: now + ms }, now),
  );
  expect(new Set(records.map((r) => r.headers['tier']))).toEqual(new Set(['minute', 'hour', 'day']));
  const producer = createKafka(pipeline.config.kafka, logger, '-test-forecast').producer();
  await producer.connect();
  try {
    await producer.sendBatch({ topicMessages: byTopic(records) });
  } finally {
    await producer.disconnect();
  }

  // No group has consumed anything yet: every entry is held where it was written.
  const forecast = await readForecast(admin, topology, pipeline.config.groupPrefix, () => systemClock.now());
  expect(forecastPerBucket(forecast)).toEqual(heldPerBucket(records));
  expect(forecast.due).toBe(0);
  const tierTotal = (name: string) => forecast.tiers.find((t) => t.tier === name)!.buckets.reduce((n, b) => n + b.entries, 0);
  expect([tierTotal('minute'), tierTotal('hour'), tierTotal('day')]).toEqual([43, 2, 1]);
  const hot = forecast.tiers[0]!.buckets.find((b) => b.entries === 40)!;
  // The same offsets at the hot bucket's start: released (the rule itself: unit tests, core/forecast).
  expect(forecastOf(topology, hot.bucketStartMs, () => 0).tiers[0]!.buckets.find((b) => b.position === 0)!.state).toBe('released');

  // The command: a line per bucket that holds entries, the hot one with the longest bar.
  const chart = spawnCli(['forecast'], pipeline.env);
  expect((await chart.exited).code).toBe(0);
  logger.info({ chart: chart.stdout() }, 'forecast as printed');
  const lines = chart.stdout().split('\n');
  const hotLine = lines.find((l) => / 40 █+$/.test(l));
  expect(hotLine).toBeDefined();
  const bars = lines.map((l) => /█+/.exec(l)?.[0].length ?? 0);
  expect(Math.max(...bars)).toBe(/█+/.exec(hotLine!)![0].length);
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^minute: 43 entries in \d+ of 12 buckets$/),
      expect.stringMatching(/^hour: 2 entries/),
      expect.stringMatching(/^day: 1 entry in 1 of 6 buckets$/),
    ]),
  );
  const json = spawnCli(['forecast', '--json', '--tier', 'hour'], pipeline.env);
  expect((await json.exited).code).toBe(0);
  const parsed = JSON.parse(json.stdout()) as { tiers: Array<{ tier: string; buckets: Array<{ entries: number }> }> };
  expect(parsed.tiers.map((t) => t.tier)).toEqual(['hour']);
  expect(parsed.tiers[0]!.buckets.reduce((n, b) => n + b.entries, 0)).toBe(2);
  const unknownTier = spawnCli(['forecast', '--tier', 'week'], pipeline.env);
  expect((await unknownTier.exited).code).toBe(64);
  expect(unknownTier.stderr()).toContain("no tier 'week' in the topology (tiers: minute, hour, day)");

  // The same as metrics: the cascader role reads the forecast into timebucket_forecast_entries
  // (the expirer not yet started, the hot bucket stays held, whatever its position by then).
  await pipeline.start(['cascader']);
  const gauge = async () => (await pipeline.metrics.forecastEntries.get()).values;
  await waitFor(
    'the hot bucket in timebucket_forecast_entries',
    async () => ((await gauge()).some((v) => v.labels.tier === 'minute' && v.value === 40) ? true : undefined),
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  const values = await gauge();
  expect(values.find((v) => v.labels.tier === 'due')?.value).toBe(0);
  // Every position of every tier, as the forecast has them: ring buckets per tier, and the due lane.
  expect(values).toHaveLength(1 + topology.tiers.reduce((n, t) => n + t.ring, 0));

  // The hold stages take every bucket as it is released: the coarser tiers cascade theirs into
  // finer ones, the expirer finds no row to transition and commits.
  await pipeline.start(['expirer']);
  const total = (f: Forecast) => f.due + f.tiers.reduce((n, t) => n + t.buckets.reduce((m, b) => m + b.entries, 0), 0);
  // The last entry is due 40 s after it was written; each wait below is bounded by a lap of it.
  await waitFor(
    'every count 0 once the buckets passed and their entries are done',
    async () => (total(await readForecast(admin, topology, pipeline.config.groupPrefix, () => systemClock.now())) === 0 ? true : undefined),
    {
      timeoutMs: 120_000,
      intervalMs: 1_000,
    },
  );
});

test("rows paid or extended after they were scheduled: their first entries still count (an upper bound), beside the extended rows' new ones", async () => {
  // Tiers wide enough that rows due in 100 s (the day ring: the hour ring reaches 48 s) and 130 s
  // stay held in one bucket each for the whole test: the day ring's buckets are 40 s wide.
  const scheduling = await createTestPipeline({
    editTopology: (raw) => {
      raw.tiers[1] = { ...raw.tiers[1]!, widthMs: 8_000, leadMs: 1_000 };
      raw.tiers[2] = { ...raw.tiers[2]!, widthMs: 40_000, leadMs: 4_000 };
    },
  });
  const db = createDb(scheduling.config.db);
  try {
    await scheduling.start(['repartitioner']);
    const { topology } = scheduling;
    const read = () => readForecast(admin, topology, scheduling.config.groupPrefix, () => systemClock.now());
    // Other test files write coupons to the same captured table meanwhile, and this pipeline's
    // repartitioner schedules theirs too: counts are read in the buckets of these rows' due
    // times, and can only be at least theirs.
    const rows = Array.from({ length: 10 }, () => ({ user_id: 9, face_value: 5, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 100 SECOND') }));
    const [first] = await db('coupons').insert(rows);
    const ids = rows.map((_, i) => first! + i);
    const dueMs = ((await db('coupons').where({ id: first }).first()) as { expire_time: Date }).expire_time.getTime();
    const bucketOf = (ms: number) => {
      const r = route(topology, ms, systemClock.now());
      if (r.lane !== 'ring' || r.tierName !== 'day') throw new Error(`due ${ms} is not in the day ring now`);
      return `${r.topic}@${r.bucketStartMs}`;
    };
    const [first10, extended] = [bucketOf(dueMs), bucketOf(dueMs + 30_000)];
    const countIn = (f: Forecast, bucket: string) => forecastPerBucket(f).get(bucket) ?? 0;
    const before = await waitFor(
      'the ten rows scheduled in their day bucket',
      async () => {
        const f = await read();
        return countIn(f, first10) >= 10 ? f : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    await db('coupons').whereIn('id', ids.slice(0, 3)).update({ status: 'USED' });
    await db('coupons')
      .whereIn('id', ids.slice(3, 6))
      .update({ expire_time: db.raw('expire_time + INTERVAL 30 SECOND') });
    // The extended rows' changes bring their new entries (in the same bucket or the next); the paid rows' bring none.
    const grown = countIn(before, extended) + 3;
    const after = await waitFor(
      'the extended rows scheduled again',
      async () => {
        const f = await read();
        return countIn(f, extended) >= grown ? f : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // Every first entry is still counted where it was, the paid and the extended rows' among them.
    expect(countIn(after, first10)).toBeGreaterThanOrEqual(countIn(before, first10) + (first10 === extended ? 3 : 0));
    expect(
      await db('coupons')
        .whereIn('id', ids)
        .where({ status: 'ACTIVE' })
        .count({ n: '*' })
        .then((r) => Number(r[0]!.n)),
    ).toBe(7);
  } finally {
    await scheduling.stopAll();
    await db.destroy();
  }
});
