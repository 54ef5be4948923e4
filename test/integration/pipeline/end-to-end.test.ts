/**
 * The whole pipeline through real Debezium: rows written with mysql2 → CDC → repartitioner →
 * rings (second-wide buckets) → cascader / expirer → database + event_outbox → outbox connector → event topics,
 * read back and decoded through the registry.
 *
 * @mysql
 * @lane captured-2
 */
import { createDb, Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { config as baseConfig, logger } from '../../support/stack';
import { outboxCount, outboxKeys } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { collectEvents, SeenEvent } from '../../support/events';
import { waitFor } from '../../support/wait-for';
import { countInStatus, metricSum } from '../../support/counts';

let db: Db;
let pipeline: TestPipeline;
let events: { events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> };
const marker = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);

type Row = {
  id: number;
  status: string;
  expire_time: Date;
  expired_at?: Date | null;
  cancel_time?: Date | null;
  cancel_reason?: string | null;
  locked_order_id?: number | null;
};

async function insertCoupons(count: number, spreadMs: number, offsetMs = 0, status = 'ACTIVE'): Promise<number[]> {
  const rows = Array.from({ length: count }, () => ({
    user_id: marker,
    status,
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.floor((offsetMs + Math.random() * spreadMs) * 1000)]),
  }));
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += 200) {
    const [first] = await db('coupons').insert(rows.slice(i, i + 200));
    for (let k = 0; k < Math.min(200, rows.length - i); k += 1) ids.push(first! + k);
  }
  return ids;
}

async function insertOrder(offsetMs: number, couponId: number | null = null): Promise<number> {
  const [id] = await db('orders').insert({
    user_id: marker,
    status: 'UNPAID',
    coupon_id: couponId,
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [offsetMs * 1000]),
  });
  return id!;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe('end to end through Debezium', () => {
  let bulkCoupons: number[];
  let bulkOrders: number[];
  let farCoupons: number[];
  let warmUpCoupon: number;
  let lockedPairs: Array<{ order: number; coupon: number }>;
  let paidOrder: number;
  let usedCoupon: number;
  let pushedCoupon: number;
  /** The event keys of the first test's transitions. */
  let ourKeys: string[] = [];

  beforeAll(async () => {
    db = createDb(baseConfig.db);
    pipeline = await createTestPipeline();
    events = await collectEvents(
      pipeline.config,
      pipeline.topology.events.map((e) => e.topic),
    );
    await pipeline.start();

    // The tier an entry lands in is decided when the repartitioner reads its change, so the far
    // coupons below need the path live first: one coupon due at once must have gone all the way
    // through. Under load the group's first join alone can take longer than a tier's margin.
    [warmUpCoupon] = (await insertCoupons(1, 0, 500)) as [number];
    await waitFor(
      'the warm-up coupon expired through the pipeline',
      async () => ((await countInStatus(db, 'coupons', 'EXPIRED', [warmUpCoupon])) === 1 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
      },
    );
    // Beyond the finest ring's horizon (9 s) → hour tier; beyond the hour tier's (24 s, in 4 s
    // buckets) → day tier. Written before the burst below so that its capture does not delay
    // theirs: each has about 6 s (hour) and 20 s (day) of capture lag to spare.
    farCoupons = [...(await insertCoupons(5, 2_000, 15_000)), ...(await insertCoupons(5, 2_000, 44_000))];

    // Due 3–13 s after being written: later than the CDC path takes under this insert burst, so the
    // delay measures holding and firing rather than Debezium catching up.
    bulkCoupons = await insertCoupons(1_000, 10_000, 3_000);
    bulkOrders = [];
    for (let i = 0; i < 200; i += 1) bulkOrders.push(await insertOrder(3_000 + Math.floor(Math.random() * 10_000)));

    // Orders holding a coupon that is already overdue: cancelling releases it, then it expires.
    lockedPairs = [];
    for (let i = 0; i < 5; i += 1) {
      const [coupon] = await insertCoupons(1, 0, -2_000, 'LOCKED');
      const order = await insertOrder(3_000, coupon!);
      await db('coupons').where({ id: coupon }).update({ locked_order_id: order });
      lockedPairs.push({ order, coupon: coupon! });
    }

    paidOrder = await insertOrder(3_000);
    await db('orders').where({ id: paidOrder }).update({ status: 'PAID' });
    [usedCoupon] = (await insertCoupons(1, 0, 3_000)) as [number];
    await db('coupons').where({ id: usedCoupon }).update({ status: 'USED' });
    [pushedCoupon] = (await insertCoupons(1, 0, 3_000)) as [number];
    await db('coupons')
      .where({ id: pushedCoupon })
      .update({ expire_time: db.raw('expire_time + INTERVAL 9 SECOND') });
  });

  afterAll(async () => {
    await events?.stop();
    await pipeline?.stopAll();
    await db?.destroy();
  });

  test('every due row transitions exactly once, never before its time, with one outbox row and one event each', async () => {
    const couponIds = [warmUpCoupon, ...bulkCoupons, ...farCoupons, ...lockedPairs.map((p) => p.coupon), pushedCoupon];
    const orderIds = [...bulkOrders, ...lockedPairs.map((p) => p.order)];
    await waitFor(
      'all due coupons expired and orders cancelled',
      async () => {
        const c = await countInStatus(db, 'coupons', 'EXPIRED', couponIds);
        const o = await countInStatus(db, 'orders', 'CANCELLED', orderIds);
        return c === couponIds.length && o === orderIds.length ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );

    const coupons = (await db('coupons').whereIn('id', couponIds).select('id', 'status', 'expire_time', 'expired_at')) as Row[];
    for (const c of coupons) expect(c.expired_at!.getTime()).toBeGreaterThanOrEqual(c.expire_time.getTime());
    const orders = (await db('orders').whereIn('id', orderIds).select('id', 'status', 'expire_time', 'cancel_time', 'cancel_reason')) as Row[];
    for (const o of orders) {
      expect(o.cancel_time!.getTime()).toBeGreaterThanOrEqual(o.expire_time.getTime());
      expect(o.cancel_reason).toBe('TIMEOUT');
    }

    // A transition's key ends with its database time, which stamped expired_at / cancel_time too.
    const keys = [
      ...coupons.map((c) => `coupon-expired-${c.id}-${c.expire_time.getTime()}-${c.expired_at!.getTime()}`),
      ...orders.map((o) => `order-cancelled-${o.id}-${o.expire_time.getTime()}-${o.cancel_time!.getTime()}`),
    ];
    expect(await outboxCount(db, pipeline.catalogue, { keys })).toEqual({ rows: keys.length, keys: keys.length });
    ourKeys = keys;

    const wanted = new Set(keys);
    await waitFor(
      'every event on the event topics',
      () => (new Set(events.events.map((e) => e.headers['event_key']).filter((k) => wanted.has(k!))).size === keys.length ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    const ours = events.events.filter((e) => wanted.has(e.headers['event_key']!));
    expect(new Set(ours.map((e) => e.headers['event_key'])).size).toBe(ours.length); // no duplicates on the wire
    expect(events.undecodable).toEqual([]);
    for (const e of ours) {
      expect(e.value['event_key']).toBe(e.headers['event_key']);
      expect(e.headers['ce_id']).toBe(e.headers['event_key']);
      expect(e.key).toBe(String(e.value['event_type'] === 'COUPON_EXPIRED' ? e.value['coupon_id'] : e.value['order_id']));
    }

    // Delay = transition time − due time, both by the database clock. Reported, never asserted:
    // speed is measured by benchmarks. Released coupons are left out: they were overdue while
    // locked, by design.
    const delayOf = (r: Row) => (r.expired_at ?? r.cancel_time)!.getTime() - r.expire_time.getTime();
    const report = (name: string, rows: Row[]) => {
      const d = rows.map(delayOf).sort((a, b) => a - b);
      logger.info(`end-to-end ${name}: ${d.length} transitions; delay p50 ${percentile(d, 50)} ms, p99 ${percentile(d, 99)} ms, max ${d[d.length - 1]} ms`);
    };
    // Coupon and order ids come from different tables and can coincide: filter each on its own.
    report('bulk (due 3–13 s after insert)', [...coupons.filter((r) => bulkCoupons.includes(r.id)), ...orders.filter((r) => bulkOrders.includes(r.id))]);
    report(
      'far (through hour and day tiers)',
      coupons.filter((r) => farCoupons.includes(r.id)),
    );
  });

  test('metrics tell the truth: transitions, delays and published events counted; due lag seen in a burst, then zero', async () => {
    // A burst: BURST coupons due at one instant. Once their bucket is released the expirer holds
    // all of them due at once, so the due lag (released, unfinished) must read above zero until
    // the batches commit. Sampled from the registry's exposition, as a scraper reads it.
    const BURST = 300;
    const lagSamples: number[] = [];
    const sampler = setInterval(() => {
      void pipeline.metrics.registry.getSingleMetricAsString('timebucket_due_lag_messages').then((text) => {
        const m = /^timebucket_due_lag_messages\{stage="expirer"\} (\d+)$/m.exec(text);
        if (m) lagSamples.push(Number(m[1]));
      });
    }, 5);
    let burst: number[];
    try {
      const [[{ at }]] = (await db.raw('SELECT NOW(3) + INTERVAL 4 SECOND AS at')) as [[{ at: Date }]];
      const [first] = await db('coupons').insert(Array.from({ length: BURST }, () => ({ user_id: marker, status: 'ACTIVE', expire_time: at })));
      burst = Array.from({ length: BURST }, (_, k) => first! + k);
      await waitFor(
        `the ${BURST} burst coupons expired`,
        async () => {
          return (await countInStatus(db, 'coupons', 'EXPIRED', burst)) === BURST ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
    } finally {
      clearInterval(sampler);
    }
    const peakLag = Math.max(0, ...lagSamples);
    logger.info(`due lag during the burst: ${lagSamples.length} samples, peak ${peakLag}, ${lagSamples.filter((n) => n > 0).length} above zero`);
    expect(peakLag).toBeGreaterThan(0);
    expect(peakLag).toBeLessThanOrEqual(BURST + 1_000); // no more than was ever due at once

    const byEntity = new Map(
      await Promise.all(
        ['coupon', 'order'].map(async (entity) => [entity, await metricSum(pipeline.metrics.transitions, { entity, path: 'stream' })] as const),
      ),
    );
    const count = (entity: string) => byEntity.get(entity)!;
    // At least ours: the pipeline also expires rows of other runs against the same stack that fall due.
    expect(count('coupon')).toBeGreaterThanOrEqual(1 + bulkCoupons.length + farCoupons.length + lockedPairs.length + 1 + BURST);
    expect(count('order')).toBeGreaterThanOrEqual(bulkOrders.length + lockedPairs.length);
    const delay = await pipeline.metrics.delay.get();
    const observed = delay.values.filter((v) => v.metricName === 'timebucket_transition_delay_seconds_count').reduce((a, v) => a + v.value, 0);
    expect(observed).toBe(count('coupon') + count('order'));
    const routed = await pipeline.metrics.routed.get();
    expect(routed.values.map((v) => v.labels['lane'])).toEqual(expect.arrayContaining(['minute', 'hour', 'day']));
    expect((await pipeline.metrics.cascaded.get()).values[0]?.value).toBeGreaterThanOrEqual(farCoupons.length);
    await waitFor('due lag to drain to zero', async () => {
      const lag = await pipeline.metrics.dueLag.get();
      return lag.values.length > 0 && lag.values.every((v) => v.value === 0) ? true : undefined;
    });

    // events_written_total is exactly the number of events this pipeline's transitions wrote,
    // and the router put each of them on the event topics (its own, unique to this test) once,
    // counted by offsets; ours (the first test's and the burst's) are among them.
    const burstKeys = new Set(await outboxKeys(db, pipeline.catalogue, { entity: 'coupon', ids: burst }));
    expect(burstKeys.size).toBe(BURST);
    await waitFor(
      'the burst events on the event topics',
      () => (events.events.filter((e) => burstKeys.has(e.headers['event_key']!)).length >= BURST ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
    const admin = createKafka(pipeline.config.kafka, logger, '-test-offsets').admin();
    await admin.connect();
    const onTopics = async (): Promise<number> => {
      let n = 0;
      for (const { topic } of pipeline.topology.events) for (const p of await admin.fetchTopicOffsets(topic)) n += Number(p.high);
      return n;
    };
    const published = async (): Promise<number> => metricSum(pipeline.metrics.eventsWritten);
    let counts = { published: -1, onTopics: -2 };
    try {
      // The topics trail the counter by the connector's capture.
      await waitFor(
        'events_written_total to equal the events on the topics',
        async () => {
          counts = { published: await published(), onTopics: await onTopics() };
          return counts.published === counts.onTopics ? true : undefined;
        },
        { timeoutMs: 30_000 },
      ).catch(() => undefined);
    } finally {
      await admin.disconnect();
    }
    logger.info(`events_written_total ${counts.published}; events on the topics ${counts.onTopics}; ours ${ourKeys.length + BURST}`);
    expect(counts.published).toBe(counts.onTopics);
    expect(counts.published).toBeGreaterThanOrEqual(ourKeys.length + BURST);
    const text = await pipeline.metrics.registry.metrics();
    expect(text).toMatch(new RegExp(`^timebucket_events_written_total ${counts.published}$`, 'm'));
  });

  test('a released coupon that was overdue expires after its order is cancelled', async () => {
    const released = (await db('orders')
      .whereIn(
        'id',
        lockedPairs.map((p) => p.order),
      )
      .select('id', 'status')) as Row[];
    expect(released.every((o) => o.status === 'CANCELLED')).toBe(true);
    const coupons = (await db('coupons')
      .whereIn(
        'id',
        lockedPairs.map((p) => p.coupon),
      )
      .select('id', 'status', 'locked_order_id')) as Row[];
    expect(coupons.map((c) => c.status)).toEqual(lockedPairs.map(() => 'EXPIRED'));
    expect(coupons.every((c) => c.locked_order_id === null)).toBe(true);
  });

  test('a paid order and a used coupon stay untouched; a pushed expiry fires at the new time', async () => {
    await expect(db('orders').where({ id: paidOrder }).first()).resolves.toMatchObject({ status: 'PAID', cancel_time: null });
    await expect(db('coupons').where({ id: usedCoupon }).first()).resolves.toMatchObject({ status: 'USED', expired_at: null });
    const pushed = (await db('coupons').where({ id: pushedCoupon }).first()) as Row;
    expect(pushed.status).toBe('EXPIRED');
    expect(pushed.expired_at!.getTime()).toBeGreaterThanOrEqual(pushed.expire_time.getTime());
    const keys = await outboxKeys(db, pipeline.catalogue, { entity: 'coupon', ids: [pushedCoupon] });
    expect(keys).toEqual([`coupon-expired-${pushedCoupon}-${pushed.expire_time.getTime()}-${pushed.expired_at!.getTime()}`]);
  });
});
