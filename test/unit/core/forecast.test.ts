import { forecastOf, forecastTopics, unconsumed } from '../../../src/core/forecast';
import { bucketRecord } from '../../../src/core/bucket-record';
import { parseEntityFile } from '../../../src/core/entity-file';
import { parseTopology, ringTopic } from '../../../src/core/topology';
import testTopologyJson from '../../../topics/test.json';
import productionJson from '../../../topics/production.json';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// Tiers of 1 s (ring 12, guard 3), 4 s (ring 8, guard 2) and 16 s (ring 6, guard 2).
const topology = parseTopology(testTopologyJson, 'topics/test.json');
const catalogue = parseEntityFile(readFileSync(join(__dirname, '../../../entities/default.json'), 'utf8'), 'entities/default.json');
const NOW = 1_000_000_000_500;

describe('unconsumed', () => {
  test('end minus the committed offset, per partition; a partition never committed counts from the log start', () => {
    expect(
      unconsumed([
        { partition: 0, low: 0, high: 10, committed: 4 },
        { partition: 1, low: 5, high: 9, committed: null },
        { partition: 2, low: 7, high: 7, committed: 3 }, // retention removed what was never read: nothing left
      ]),
    ).toBe(6 + 4 + 0);
  });
});

describe('forecastOf', () => {
  test('each tier: ring buckets, one per topic, from guard widths back to the last its horizon reaches', () => {
    const f = forecastOf(topology, NOW, () => 0);
    for (const [i, tier] of topology.tiers.entries()) {
      const t = f.tiers[i]!;
      expect(t.buckets.map((b) => b.position)).toEqual(Array.from({ length: tier.ring }, (_, k) => k - tier.guard));
      expect(new Set(t.buckets.map((b) => b.topic)).size).toBe(tier.ring);
      expect(new Set(t.buckets.map((b) => b.topic))).toEqual(new Set(Array.from({ length: tier.ring }, (_, k) => ringTopic(topology, tier, k))));
    }
    expect(forecastTopics(topology)).toHaveLength(1 + 12 + 8 + 6);
  });

  test('the entries the router writes at a clock are counted in the bucket it wrote them for, whichever tier', () => {
    // Entries due 0.2 s to 90 s ahead, written now: per topic, as a broker would hold them unconsumed.
    const written = new Map<string, number>();
    const dueTimes = [200, 700, 1_400, 1_450, 5_000, 9_000, 30_000, 90_000].map((d) => NOW + d);
    for (const [n, due] of dueTimes.entries()) {
      const record = bucketRecord(topology, catalogue, { entity: 'coupon', transition: 'expired', id: String(n + 1), expireAtMs: due }, NOW);
      written.set(record.topic, (written.get(record.topic) ?? 0) + 1);
    }
    const f = forecastOf(topology, NOW, (topic) => written.get(topic) ?? 0);
    const counted = f.tiers.flatMap((t) => t.buckets).reduce((n, b) => n + b.entries, 0);
    expect(counted).toBe(dueTimes.length);
    // Each entry sits in the bucket whose start is the bucket of its due time in that tier,
    // except the one beyond every horizon (90 s), parked in the coarsest tier's last bucket.
    const held = (i: number) => f.tiers[i]!.buckets.filter((b) => b.entries > 0).map((b) => [b.position, b.entries]);
    // NOW is 0.5 s into a bucket of every tier. Minute: due in the current second, the next (3), 5 s on.
    expect(held(0)).toEqual([
      [0, 1],
      [1, 3],
      [5, 1],
    ]);
    expect(held(1)).toEqual([[2, 1]]); // 9.5 s on: beyond the minute ring's 9 s, the hour's third bucket
    // 30.5 s on: the day's next bucket; 90.5 s on, beyond every horizon: parked in the day's last.
    expect(held(2)).toEqual([
      [1, 1],
      [3, 1],
    ]);
    const day = f.tiers[2]!;
    expect(day.buckets.filter((b) => b.parksLater).map((b) => b.position)).toEqual([3]);
    expect(day.buckets[day.buckets.length - 1]!.parksLater).toBe(true);
  });

  test('released: a bucket whose start minus the tier lead has come; the rest are ahead', () => {
    const f = forecastOf(topology, NOW, () => 1);
    const minute = f.tiers[0]!; // lead 300 ms, NOW 500 ms into its second: position 0 released, +1 not
    expect(minute.buckets.find((b) => b.position === 0)!.state).toBe('released');
    expect(minute.buckets.find((b) => b.position === 1)!.state).toBe('ahead');
    const hour = f.tiers[1]!; // 4 s wide, lead 2 s: NOW is 0.5 s into its bucket
    expect(hour.buckets.filter((b) => b.state === 'released').map((b) => b.position)).toEqual([-2, -1, 0]);
    expect(f.due).toBe(1);
  });

  test('the production topology: 568 ring topics and the due lane', () => {
    expect(forecastTopics(parseTopology(productionJson, 'topics/production.json'))).toHaveLength(1 + 120 + 48 + 400);
  });
});
