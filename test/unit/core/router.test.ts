import fc from 'fast-check';
import { partitionOfRoute, route, shardOf, type Route } from '../../../src/core/router';
import { bucketStartOf, horizonMs, parseTopology, type Tier, type Topology } from '../../../src/core/topology';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const base = { shards: 16, due: { partitions: 16 }, replayWindowMs: DAY, dlq: { partitions: 1, retentionMs: 14 * DAY }, events: [] };

const production = parseTopology(
  {
    ...base,
    prefix: 'tb',
    tiers: [
      { name: 'minute', widthMs: MIN, ring: 120, guard: 2, leadMs: 0, partitions: 16 },
      { name: 'hour', widthMs: HOUR, ring: 48, guard: 2, leadMs: 10 * MIN, partitions: 4 },
      { name: 'day', widthMs: DAY, ring: 400, guard: 2, leadMs: 2 * HOUR, partitions: 4 },
    ],
  },
  'production',
);

// Second-wide buckets, small rings: laps come round within a few dozen entries. Horizons are
// 8 s, 24 s, 96 s: 4 s + 2 s ≤ 8 s and 16 s + 4 s ≤ 24 s (parseTopology checks it too).
const scaled = parseTopology(
  {
    ...base,
    prefix: 'ts',
    shards: 8,
    tiers: [
      { name: 's1', widthMs: 1000, ring: 10, guard: 2, leadMs: 0, partitions: 4 },
      { name: 's4', widthMs: 4000, ring: 8, guard: 2, leadMs: 2000, partitions: 2 },
      { name: 's16', widthMs: 16000, ring: 8, guard: 2, leadMs: 4000, partitions: 3 },
    ],
  },
  'scaled',
);

describe('route', () => {
  const N = Date.UTC(2026, 0, 1); // a day start: minute, hour and day buckets all begin here

  test.each<[string, number, number, Route]>([
    ['past → due', N - 1, N, { lane: 'due', topic: 'tb.due' }],
    ['exactly now → due', N, N, { lane: 'due', topic: 'tb.due' }],
    ['1 ms ahead → current minute bucket', N + 1, N, ring(0, 'tb.minute.000', N, N)],
    ['later in the current minute', N + 50_000, N + 30_000, ring(0, 'tb.minute.000', N, N)],
    ['last minute bucket inside the horizon', N + 118 * MIN - 1, N, ring(0, 'tb.minute.117', N + 117 * MIN, N + 117 * MIN)],
    ['beyond the minute horizon → hour', N + 118 * MIN, N, ring(1, 'tb.hour.01', N + HOUR, N + HOUR - 10 * MIN)],
    ['hour horizon from mid-hour', N + 46 * HOUR - 1, N + 30 * MIN, ring(1, 'tb.hour.45', N + 45 * HOUR, N + 45 * HOUR - 10 * MIN)],
    ['beyond the hour horizon → day', N + 46 * HOUR, N, ring(2, 'tb.day.055', N + DAY, N + DAY - 2 * HOUR)],
    ['far ahead → day', N + 300 * DAY + 5, N, ring(2, 'tb.day.354', N + 300 * DAY, N + 300 * DAY - 2 * HOUR)],
    ['beyond every horizon → coarsest last bucket', N + 500 * DAY, N + HOUR, ring(2, 'tb.day.051', N + 397 * DAY, N + 397 * DAY - 2 * HOUR)],
  ])('%s', (_name, expireAtMs, nowMs, expected) => {
    expect(route(production, expireAtMs, nowMs)).toEqual(expected);
  });

  function ring(tierIndex: number, topic: string, bucketStartMs: number, releaseAtMs: number): Route {
    const tierName = ['minute', 'hour', 'day'][tierIndex] ?? '?';
    return { lane: 'ring', tierIndex, tierName, topic, bucketStartMs, releaseAtMs };
  }

  test('rejects times that are not integral milliseconds', () => {
    expect(() => route(production, Number.NaN, N)).toThrow(RangeError);
    expect(() => route(production, N, 1.5)).toThrow(RangeError);
  });

  test.each([
    ['production', production],
    ['scaled', scaled],
  ])('%s: the finest covering tier, inside its write window, released lead before its bucket', (_n, topology) => {
    const coarsest = topology.tiers.length - 1;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), offsetArb(topology), (now, offset) => {
        const r = route(topology, now + offset, now);
        if (r.lane === 'due') {
          expect(offset).toBeLessThanOrEqual(0);
          return;
        }
        const tier = topology.tiers[r.tierIndex];
        if (tier === undefined) throw new Error(`no tier ${r.tierIndex}`);
        const current = bucketStartOf(tier, now);
        expect(r.bucketStartMs).toBeGreaterThanOrEqual(current);
        expect(r.bucketStartMs - current).toBeLessThan(horizonMs(tier));
        expect(r.releaseAtMs).toBe(r.bucketStartMs - tier.leadMs);
        for (const finer of topology.tiers.slice(0, r.tierIndex)) {
          expect(bucketStartOf(finer, now + offset) - bucketStartOf(finer, now)).toBeGreaterThanOrEqual(horizonMs(finer));
        }
        // Only a clamped entry sits outside its own bucket.
        if (r.bucketStartMs !== bucketStartOf(tier, now + offset)) expect(r.tierIndex).toBe(coarsest);
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    ['production', production],
    ['scaled', scaled],
  ])('%s: a release cascades to a finer tier, or to a later coarsest bucket', (_n, topology) => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), offsetArb(topology), fc.nat(3 * MIN), (now, offset, late) => {
        const r = route(topology, now + offset, now);
        fc.pre(r.lane === 'ring' && r.tierIndex > 0);
        if (r.lane !== 'ring') return;
        const again = route(topology, now + offset, Math.max(now, r.releaseAtMs) + late);
        if (again.lane === 'ring' && again.tierIndex === r.tierIndex) {
          expect(again.tierIndex).toBe(topology.tiers.length - 1);
          expect(again.bucketStartMs).toBeGreaterThan(r.bucketStartMs);
        } else if (again.lane === 'ring') {
          expect(again.tierIndex).toBeLessThan(r.tierIndex);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('shardOf', () => {
  test('is FNV-1a 32-bit (reference vectors, with shards = 2^32)', () => {
    expect(shardOf('', 2 ** 32)).toBe(0x811c9dc5);
    expect(shardOf('a', 2 ** 32)).toBe(0xe40c292c);
    expect(shardOf('foobar', 2 ** 32)).toBe(0xbf9cf968);
  });

  test('never changes: pinned values', () => {
    expect(shardOf('1', 16)).toBe(12);
    expect(shardOf('42', 16)).toBe(3);
    expect(shardOf('1234567890123', 16)).toBe(12);
    expect(shardOf('18446744073709551615', 2 ** 32)).toBe(2259203060);
  });

  test('hashes the UTF-8 bytes of a key that is not ASCII (the fast path is for decimal ids only)', () => {
    expect(shardOf('coupé-7', 2 ** 32)).toBe(1181566970);
    expect(shardOf('€', 2 ** 32)).toBe(697271083);
  });

  test('is within range', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 1024 }), (id, shards) => {
        const s = shardOf(id, shards);
        expect(Number.isInteger(s) && s >= 0 && s < shards).toBe(true);
      }),
    );
  });

  test('rejects a shard count below 1', () => {
    expect(() => shardOf('1', 0)).toThrow(RangeError);
  });
});

/** expireAt − now: due, near, each tier's range, and beyond every horizon. */
function offsetArb(t: Topology): fc.Arbitrary<number> {
  const horizons = t.tiers.map(horizonMs);
  const widest = Math.max(...horizons);
  const finest = t.tiers[0]?.widthMs ?? 1;
  return fc.oneof(
    fc.integer({ min: -finest, max: 0 }),
    ...horizons.map((h) => fc.integer({ min: 1, max: Math.ceil(1.5 * h) })),
    fc.integer({ min: 1, max: 3 * widest }),
  );
}

// I1 model. Writers route new entries with their own clocks (true time + offset); appends land
// in true-time order. With `cascade`, each coarser-tier entry is re-routed at its release by a
// cascading instance (its own clock offset, possibly late) and appended again.
// Times count from the start of the run; simulate() sorts entries by arrival.
type SimEntry = { arriveMs: number; expireMs: number; writer: number; id: number; cascader: number; lateMs: number };
type Pending = { atMs: number; clockOffsetMs: number; expireAtMs: number; shard: number; entry: SimEntry; hops: number };
type SimResult = { logs: Map<string, number[]>; finals: { route: Route; expireAtMs: number }[] };

function simulate(t: Topology, startMs: number, entries: SimEntry[], offsets: number[], cascade: boolean): SimResult {
  const logs = new Map<string, number[]>();
  const finals: SimResult['finals'] = [];
  const queue: Pending[] = [];
  const schedule = (p: Pending): void => {
    // True-time order; equal times in scheduling order.
    let i = queue.length;
    while (i > 0 && (queue[i - 1]?.atMs ?? 0) > p.atMs) i -= 1;
    queue.splice(i, 0, p);
  };
  const offsetOf = (i: number): number => offsets[i % offsets.length] ?? 0;
  for (const entry of [...entries].sort((x, y) => x.arriveMs - y.arriveMs)) {
    const shard = shardOf(String(entry.id), t.shards);
    const at = { atMs: startMs + entry.arriveMs, clockOffsetMs: offsetOf(entry.writer), expireAtMs: startMs + entry.expireMs };
    schedule({ ...at, shard, entry, hops: 0 });
  }
  for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
    const r = route(t, p.expireAtMs, p.atMs + p.clockOffsetMs);
    if (r.lane === 'ring') {
      const key = `${r.topic}#${partitionOfRoute(t, r, p.shard)}`;
      const log = logs.get(key) ?? [];
      log.push(r.bucketStartMs);
      logs.set(key, log);
    }
    if (!cascade || r.lane === 'due' || r.tierIndex === 0) {
      finals.push({ route: r, expireAtMs: p.expireAtMs });
      continue;
    }
    if (p.hops > 50) throw new Error(`cascade does not terminate for ${p.expireAtMs}`);
    const clockOffsetMs = offsetOf(p.entry.cascader + p.hops);
    // The cascader reads the entry once it is written and its clock says the bucket is released.
    schedule({ ...p, atMs: Math.max(p.atMs, r.releaseAtMs - clockOffsetMs) + p.entry.lateMs, clockOffsetMs, hops: p.hops + 1 });
  }
  return { logs, finals };
}

function decreases(logs: Map<string, number[]>): string[] {
  const found: string[] = [];
  for (const [key, buckets] of logs) {
    buckets.forEach((b, i) => {
      const prev = buckets[i - 1];
      if (prev !== undefined && b < prev) found.push(`${key}: ${b} after ${prev}`);
    });
  }
  return found;
}

/** Tier names whose partitions saw more than one lap (so the run tested something). */
function laps(logs: Map<string, number[]>): string[] {
  return [...logs].filter(([, b]) => new Set(b).size > 1).map(([key]) => key.split('.').slice(-2, -1).join(''));
}

/** A run starts at a bucket start of every tier, so its relative times are bucket times. */
function startArb(t: Topology): fc.Arbitrary<number> {
  const coarsest = t.tiers[t.tiers.length - 1]?.widthMs ?? 1;
  return fc.integer({ min: 0, max: 2 ** 20 }).map((n) => n * coarsest);
}

function entriesArb(t: Topology, writers: number): fc.Arbitrary<SimEntry[]> {
  const finest = t.tiers[0]?.widthMs ?? 1;
  const widest = t.tiers[t.tiers.length - 1]?.widthMs ?? 1;
  // Anywhere within a few laps of some tier, expiring anywhere.
  const spread = fc
    .tuple(fc.oneof(...t.tiers.map((tier) => fc.nat(3 * tier.ring * tier.widthMs))), offsetArb(t))
    .map(([arriveMs, offset]) => ({ arriveMs, expireMs: arriveMs + offset }));
  // Around the moment the topic of the run's first bucket (0) in the focus tier turns from lap 0
  // to lap 1 (bucket ring × width): entries for either lap, and ones due soon, arriving from two
  // buckets before to two after the earliest time lap 1 may be written. Laps overtake here if
  // anywhere.
  const lapsOf = (tier: Tier): fc.Arbitrary<{ arriveMs: number; expireMs: number }> => {
    const w = tier.widthMs;
    return fc.integer({ min: -2 * w, max: (tier.guard + 2) * w }).chain((arriveMs) =>
      fc
        .oneof(
          fc.nat(w - 1).map((j) => arriveMs + j),
          fc.nat(w - 1),
          fc.nat(w - 1).map((j) => tier.ring * w + j),
        )
        .map((expireMs) => ({ arriveMs, expireMs })),
    );
  };
  const entryOf = (focus: Tier): fc.Arbitrary<SimEntry> =>
    fc
      .record({
        times: fc.oneof(spread, lapsOf(focus)),
        writer: fc.nat(writers - 1),
        id: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.nat(7), weight: 1 }), // entries must meet in partitions
        cascader: fc.nat(writers - 1),
        lateMs: fc.oneof(fc.constant(0), fc.nat(finest), fc.nat(widest)),
      })
      .map(({ times, ...rest }) => ({ ...rest, ...times }));
  return fc.constantFrom(...t.tiers).chain((focus) => fc.array(entryOf(focus), { minLength: 10, maxLength: 40 }));
}

describe('I1: bucket times never decrease within a ring partition', () => {
  test.each([
    ['scaled', scaled],
    ['production', production],
  ])('%s, one writer', (_n, t) => {
    const lapsSeen = new Map<string, number>();
    fc.assert(
      fc.property(startArb(t), entriesArb(t, 1), (startMs, entries) => {
        const { logs } = simulate(t, startMs, entries, [0], false);
        for (const tier of laps(logs)) lapsSeen.set(tier, (lapsSeen.get(tier) ?? 0) + 1);
        expect(decreases(logs)).toEqual([]);
      }),
      { numRuns: 200 },
    );
    expect([...lapsSeen.keys()].sort()).toEqual(t.tiers.map((tier) => tier.name).sort()); // laps met in every tier
  });

  test.each([
    ['scaled', scaled],
    ['production', production],
  ])('%s, 2–4 writers with skew < guard × finest width, cascading', (_n, t) => {
    const [finest] = t.tiers;
    if (finest === undefined) throw new Error('no tiers');
    // Clock offsets in [0, guard × width): pairwise skew below the bound, often right at it.
    const maxSkew = finest.guard * finest.widthMs - 1;
    const skew = fc.oneof(fc.constant(0), fc.constant(maxSkew), fc.integer({ min: 0, max: maxSkew }));
    const lapsSeen = new Map<string, number>();
    fc.assert(
      fc.property(startArb(t), fc.array(skew, { minLength: 2, maxLength: 4 }), entriesArb(t, 4), (startMs, offsets, entries) => {
        const { logs, finals } = simulate(t, startMs, entries, offsets, true);
        for (const tier of laps(logs)) lapsSeen.set(tier, (lapsSeen.get(tier) ?? 0) + 1);
        expect(decreases(logs)).toEqual([]);
        // Every entry ends due or in the finest bucket holding its expire time.
        for (const { route: r, expireAtMs } of finals) {
          if (r.lane === 'ring') expect(r.bucketStartMs).toBe(bucketStartOf(finest, expireAtMs));
        }
      }),
      { numRuns: 300 },
    );
    expect([...lapsSeen.keys()].sort()).toEqual(t.tiers.map((tier) => tier.name).sort());
  });

  test('why the guard: writers skewed by more than guard × width break it', () => {
    // Scaled finest ring: 10 × 1 s, guard 2. Writer 1's clock is 2.5 s ahead of writer 0's.
    // At true 0.5 s writer 1 (clock 3 s) writes bucket 10 s; at 0.9 s writer 0 writes bucket 0.
    // Both live in topic ts.s1.00, and the same id means the same partition.
    const entry = { id: 7, cascader: 0, lateMs: 0 };
    const entries = [
      { ...entry, arriveMs: 500, expireMs: 10_000, writer: 1 },
      { ...entry, arriveMs: 900, expireMs: 950, writer: 0 },
    ];
    expect(decreases(simulate(scaled, 0, entries, [0, 2500], false).logs)).toEqual([expect.stringMatching(/^ts\.s1\.00#\d+: 0 after 10000$/)]);
    // Within the guard the later lap waits: writer 1 (clock 2.499 s) may not write bucket 10 s yet.
    expect(decreases(simulate(scaled, 0, entries, [0, 1999], false).logs)).toEqual([]);
  });
});
