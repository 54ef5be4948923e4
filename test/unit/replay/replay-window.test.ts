/**
 * The pure side of `replay` and `offsets reset`: which bucket an operator's --at / --tier mean
 * (any zone in, UTC out), where its records can be in the ring topic, where the bucket stands
 * against an injected clock, and how the summary and the stock-tool commands read.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseTopology, type Topology } from '../../../src/core/topology';
import { route } from '../../../src/core/router';
import { bucketPhase, bucketWindow, liveGroupOfTier, resolveTier, slackMs } from '../../../src/replay/bucket-window';
import { formatUtc, parseInstant } from '../../../src/core/utc-time';
import { offsetsResetLines, replayJson, replayLines, stockResetCommands } from '../../../src/cli/replay-output';
import { resetTarget, type OffsetsResetResult } from '../../../src/replay/bucket-offsets-reset';
import type { ReplaySummary } from '../../../src/replay/replay-bucket';

const load = (file: string): Topology => parseTopology(readFileSync(join(__dirname, '../../../topics', file), 'utf8'), file);
const test1s = load('test.json'); // minute: width 1 s, ring 12, guard 3; hour: 4 s; day: 16 s
const production = load('production.json');

describe('parseInstant: any ISO zone in, epoch ms out', () => {
  test.each([
    ['2026-12-01T10:15:30.250Z', Date.UTC(2026, 11, 1, 10, 15, 30, 250)],
    ['2026-12-01T11:15:30.250+01:00', Date.UTC(2026, 11, 1, 10, 15, 30, 250)],
    ['2026-12-01T05:15:30.250-05:00', Date.UTC(2026, 11, 1, 10, 15, 30, 250)],
    // No offset: UTC, the zone of every row and record (never the machine's local zone).
    ['2026-12-01T10:15:30.250', Date.UTC(2026, 11, 1, 10, 15, 30, 250)],
    ['2026-12-01', Date.UTC(2026, 11, 1)],
  ])('%s', (text, ms) => {
    expect(parseInstant(text)).toBe(ms);
  });

  test.each(['yesterday', '2026-13-01T00:00:00Z', '', '1764583200000'])('%j is refused with a reason', (text) => {
    expect(() => parseInstant(text)).toThrow(/not an ISO-8601 time/);
  });

  test('printed in UTC whatever zone came in', () => {
    expect(formatUtc(parseInstant('2026-12-01T11:15:30.250+01:00'))).toBe('2026-12-01T10:15:30.250Z');
  });
});

describe('resolveTier', () => {
  test('the finest by default, else by name or index', () => {
    expect(resolveTier(production)).toBe(0);
    expect(resolveTier(production, 'hour')).toBe(1);
    expect(resolveTier(production, '2')).toBe(2);
  });

  test('an unknown tier names the known ones', () => {
    expect(() => resolveTier(production, 'week')).toThrow(/no tier "week".*0=minute, 1=hour, 2=day/);
    expect(() => resolveTier(production, '3')).toThrow(/no tier "3"/);
  });
});

describe('bucketWindow', () => {
  test('the bucket containing the time: [start, end), its ring topic', () => {
    const at = parseInstant('2026-12-01T10:15:42.123Z');
    const w = bucketWindow(production, 0, at);
    expect(formatUtc(w.startMs)).toBe('2026-12-01T10:15:00.000Z');
    expect(formatUtc(w.endMs)).toBe('2026-12-01T10:16:00.000Z');
    expect(w.ringIndex).toBe((w.startMs / 60_000) % production.tiers[0]!.ring);
    expect(w.topic).toBe(`${production.prefix}.minute.${String(w.ringIndex).padStart(3, '0')}`);
    const hour = bucketWindow(production, 1, at);
    expect(formatUtc(hour.startMs)).toBe('2026-12-01T10:00:00.000Z');
    expect(hour.topic).toMatch(new RegExp(`^${production.prefix}\\.hour\\.\\d+$`));
  });

  test('a bucket boundary belongs to the bucket it starts', () => {
    const w = bucketWindow(test1s, 0, 5_000);
    expect([w.startMs, w.endMs]).toEqual([5_000, 6_000]);
  });

  test('read window: from one horizon (plus the skew budget) before the bucket to its end plus the budget', () => {
    const w = bucketWindow(test1s, 0, 100_500);
    const slack = slackMs(test1s); // guard 3 × 1 s
    expect(slack).toBe(3_000);
    // horizon = (12 − 3) × 1 s = 9 s: the first write of bucket 100 s is at clock 92 s.
    expect(w.readFromMs).toBe(100_000 - 9_000 + 1_000 - slack);
    expect(w.readUntilMs).toBe(101_000 + slack);
  });

  test('every clock at which the router writes a bucket lies inside its read window (each tier)', () => {
    for (const [tierIndex, tier] of test1s.tiers.entries()) {
      const bucket = 1_000 * tier.widthMs;
      const w = bucketWindow(test1s, tierIndex, bucket);
      const writers: number[] = [];
      // Every writer clock over two laps, every entry time of the bucket (sampled).
      for (let now = bucket - 2 * tier.ring * tier.widthMs; now < bucket + tier.widthMs; now += 250) {
        for (let expireAt = bucket; expireAt < bucket + tier.widthMs; expireAt += tier.widthMs / 4) {
          const r = route(test1s, expireAt, now);
          if (r.lane === 'ring' && r.tierIndex === tierIndex && r.bucketStartMs === bucket) writers.push(now);
        }
      }
      expect(writers.length).toBeGreaterThan(0);
      expect(Math.min(...writers)).toBeGreaterThanOrEqual(w.readFromMs);
      expect(Math.max(...writers)).toBeLessThanOrEqual(w.readUntilMs);
    }
  });

  test('the coarsest tier: entries clamped into its last writable bucket are written inside the window too', () => {
    const coarsest = test1s.tiers.length - 1;
    const tier = test1s.tiers[coarsest]!;
    const bucket = 1_000 * tier.widthMs;
    const w = bucketWindow(test1s, coarsest, bucket);
    let clamped = 0;
    for (let now = bucket - 2 * tier.ring * tier.widthMs; now < bucket + tier.widthMs; now += 500) {
      const r = route(test1s, now + 10 * tier.ring * tier.widthMs, now); // far beyond every horizon
      if (r.lane === 'ring' && r.bucketStartMs === bucket) {
        clamped += 1;
        expect(now).toBeGreaterThanOrEqual(w.readFromMs);
        expect(now).toBeLessThanOrEqual(w.readUntilMs);
      }
    }
    expect(clamped).toBeGreaterThan(0);
  });
});

describe('bucketPhase with an injected clock', () => {
  const w = bucketWindow(test1s, 0, 100_000);
  test.each([
    [99_999, 'future'],
    [100_000, 'open'],
    [w.readUntilMs, 'open'],
    [w.readUntilMs + 1, 'closed'],
  ] as const)('at %d: %s', (now, phase) => {
    expect(bucketPhase(w, now)).toBe(phase);
  });
});

test('the live group of a tier: the expirer holds the finest ring, the cascader the coarser ones', () => {
  expect(liveGroupOfTier('timebucket', 0)).toBe('timebucket.expirer');
  expect(liveGroupOfTier('timebucket', 2)).toBe('timebucket.cascader');
});

describe('output', () => {
  const window = bucketWindow(test1s, 0, parseInstant('2026-12-01T11:15:30.250+01:00'));
  const partitions = [{ partition: 1, fromOffset: '10', endOffset: '20', firstOffset: '12', records: 5, entries: 3, invalid: 0, stop: 'next-lap' as const }];
  const counts = { entries: 3, transitioned: 1, due: 0, alreadyDone: 1, notDue: 0, stale: 1, reminders: 0, invalid: 0 };

  test('replay summary: a line per figure, times in UTC', () => {
    const summary: ReplaySummary = { dryRun: false, window, phase: 'closed', partitions, counts };
    expect(replayLines(summary)).toEqual([
      'bucket: [2026-12-01T10:15:30.000Z, 2026-12-01T10:15:31.000Z) tier minute (closed)',
      `topic: ${window.topic}`,
      'partitions read: 1',
      'partition 1: offsets [10, 20) read 5 records, 3 of the bucket (first at 12), 0 invalid; stopped: next-lap',
      'entries found: 3',
      'transitioned: 1',
      'already done: 1',
      'not due: 0',
      'stale (moved on, extended or gone since): 1',
      'invalid records skipped: 0',
    ]);
    expect(replayJson(summary)).toMatchObject({
      bucket: { start: '2026-12-01T10:15:30.000Z', end: '2026-12-01T10:15:31.000Z' },
      transitioned: 1,
      stale: 1,
      reminders: 0,
    });
    expect(replayLines({ ...summary, counts: { ...counts, reminders: 4 } })).toContain('reminders run again (each sent only if it never was): 4');
  });

  test('dry run: says so, and reports due instead of transitioned', () => {
    const summary: ReplaySummary = { dryRun: true, window, phase: 'closed', partitions, counts: { ...counts, transitioned: 0, due: 2 } };
    const lines = replayLines(summary);
    expect(lines[0]).toBe('dry run: nothing was changed');
    expect(lines).toContain('due (would transition): 2');
    expect(lines.some((l) => l.startsWith('transitioned'))).toBe(false);
    const json = replayJson(summary);
    expect(json).toMatchObject({ dryRun: true, due: 2 });
    expect(json).not.toHaveProperty('transitioned');
  });

  test('offsets reset: moved partitions, untouched ones said so, the stock command per moved partition', () => {
    const scan = partitions[0]!;
    const result: OffsetsResetResult = {
      group: 'tb.expirer',
      window,
      members: [],
      refused: false,
      applied: true,
      partitions: [
        { partition: 0, committed: '40', scan },
        { partition: 1, committed: '25', first: '12', target: '12', scan },
        { partition: 2, committed: '9', first: '12', scan },
      ],
      unmoved: [],
    };
    const brokers = ['127.0.0.1:19092', '127.0.0.1:19102'];
    expect(stockResetCommands(brokers, result)).toEqual([
      `kafka-consumer-groups.sh --bootstrap-server 127.0.0.1:19092,127.0.0.1:19102 --group tb.expirer --topic ${window.topic}:1 --reset-offsets --to-offset 12 --execute`,
    ]);
    const lines = offsetsResetLines(result, false, brokers);
    expect(lines).toContain('partition 0: no record of the bucket; left at 40');
    expect(lines).toContain("partition 1: 25 -> 12 (the bucket's first record)");
    expect(lines).toContain("partition 2: 9 is not past the bucket's first record 12 (the bucket is still to be read); left");
    expect(lines).toContain('offsets reset: 1 partition(s) moved');
    // A partition that did not read back at its target: not applied, and said so.
    const partial = offsetsResetLines({ ...result, applied: false, unmoved: [{ partition: 1, target: '12', committed: '25' }] }, false, brokers);
    expect(partial).toContain('offsets reset INCOMPLETE: 0 of 1 partition(s) moved; partition 1 reads back 25, not 12: run the command again');
  });

  test('offsets only move back: never past unread records, never from "no committed offset"', () => {
    expect(resetTarget('25', '12')).toBe('12');
    expect(resetTarget('12', '12')).toBeUndefined();
    expect(resetTarget('9', '12')).toBeUndefined();
    expect(resetTarget('-1', '12')).toBeUndefined();
    expect(resetTarget('25', undefined)).toBeUndefined();
  });
});
