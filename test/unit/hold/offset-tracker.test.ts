import fc from 'fast-check';
import { OffsetTracker } from '../../../src/hold/offset-tracker';

function trackerWith(offsets: readonly number[]): OffsetTracker {
  const t = new OffsetTracker();
  for (const o of offsets) t.add(String(o));
  return t;
}

describe('OffsetTracker', () => {
  test('nothing finished → advance() does not move', () => {
    const t = trackerWith([10, 11, 12]);
    expect(t.advance()).toBeUndefined();
    expect(t.inFlight).toBe(3);
    expect(t.tracked).toBe(3);
  });

  test('returns the next offset to read (last finished + 1) over the finished prefix', () => {
    const t = trackerWith([10, 11, 12]);
    t.markDone('10');
    t.markDone('11');
    expect(t.advance()).toBe('12');
    expect(t.inFlight).toBe(1);
    expect(t.tracked).toBe(1);
    expect(t.advance()).toBeUndefined(); // nothing new finished
  });

  test('out-of-order completion: the commit point waits for the gap, then jumps over it', () => {
    const t = trackerWith([10, 11, 12, 13]);
    t.markDone('12');
    t.markDone('13');
    expect(t.advance()).toBeUndefined();
    expect(t.inFlight).toBe(2);
    expect(t.tracked).toBe(4); // finished but behind an unfinished head: still tracked
    t.markDone('11');
    expect(t.advance()).toBeUndefined();
    t.markDone('10');
    expect(t.advance()).toBe('14');
    expect(t.inFlight).toBe(0);
    expect(t.tracked).toBe(0);
  });

  test('non-contiguous offsets (compacted topic, transaction markers): commits last finished + 1', () => {
    const t = trackerWith([10, 15, 20]);
    t.markDone('10');
    expect(t.advance()).toBe('11');
    t.markDone('20');
    expect(t.advance()).toBeUndefined();
    t.markDone('15');
    expect(t.advance()).toBe('21');
  });

  test('adds after an advance keep extending the prefix', () => {
    const t = trackerWith([0, 1]);
    t.markDone('0');
    t.markDone('1');
    expect(t.advance()).toBe('2');
    t.add('2');
    t.add('3');
    t.markDone('3');
    expect(t.advance()).toBeUndefined();
    t.markDone('2');
    expect(t.advance()).toBe('4');
  });

  test('double markDone before advance is idempotent', () => {
    const t = trackerWith([5, 6]);
    t.markDone('5');
    t.markDone('5');
    expect(t.inFlight).toBe(1);
    expect(t.advance()).toBe('6');
    expect(t.inFlight).toBe(1);
    expect(t.tracked).toBe(1);
  });

  // A repeated markDone, even after a commit moved past the offset, must not change the counts.
  test('double markDone after the offset was committed past is idempotent', () => {
    const t = trackerWith([5, 6]);
    t.markDone('5');
    expect(t.advance()).toBe('6');
    t.markDone('5');
    expect(t.inFlight).toBe(1);
  });

  test('compaction past 1024 entries keeps counts and commit points right', () => {
    const n = 5000;
    const t = trackerWith(Array.from({ length: n }, (_, i) => 100 + i));
    // Finish the first 3000 but leave offset 100 + 1500 for last among them.
    for (let i = 0; i < 3000; i += 1) if (i !== 1500) t.markDone(String(100 + i));
    expect(t.advance()).toBe(String(100 + 1500));
    expect(t.tracked).toBe(n - 1500);
    expect(t.inFlight).toBe(n - 2999);
    t.markDone(String(100 + 1500));
    expect(t.advance()).toBe(String(100 + 3000)); // compacts: head 3000 > 1024 and > half of 5000
    expect(t.tracked).toBe(2000);
    expect(t.inFlight).toBe(2000);
    t.add(String(100 + n));
    for (let i = 3000; i <= n; i += 1) t.markDone(String(100 + i));
    expect(t.advance()).toBe(String(100 + n + 1));
    expect(t.tracked).toBe(0);
    expect(t.inFlight).toBe(0);
  });

  test('property: any completion order → strictly increasing commit points, never past the first unfinished, ending at last + 1', () => {
    const scenario = fc.record({ n: fc.integer({ min: 1, max: 1600 }), base: fc.integer({ min: 0, max: 1_000_000 }) }).chain(({ n, base }) =>
      fc.record({
        gaps: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: n, maxLength: n }),
        order: fc.shuffledSubarray(
          Array.from({ length: n }, (_, i) => i),
          { minLength: n, maxLength: n },
        ),
        advanceEvery: fc.integer({ min: 1, max: 50 }),
        base: fc.constant(base),
      }),
    );
    fc.assert(
      fc.property(scenario, ({ gaps, order, advanceEvery, base }) => {
        const offsets: number[] = [];
        let next = base;
        for (const g of gaps) {
          offsets.push(next);
          next += g;
        }
        const t = trackerWith(offsets);
        const finished = new Set<number>();
        let firstUnfinishedIdx = 0;
        const results: number[] = [];
        order.forEach((idx, step) => {
          t.markDone(String(offsets[idx]));
          finished.add(idx);
          if (step % advanceEvery !== 0 && step !== order.length - 1) return;
          const before = firstUnfinishedIdx;
          while (firstUnfinishedIdx < offsets.length && finished.has(firstUnfinishedIdx)) firstUnfinishedIdx += 1;
          const r = t.advance();
          if (firstUnfinishedIdx === before) {
            expect(r).toBeUndefined();
          } else {
            // Exactly last finished of the prefix + 1, which never passes the first unfinished.
            expect(r).toBe(String(offsets[firstUnfinishedIdx - 1]! + 1));
            const firstUnfinished = offsets[firstUnfinishedIdx] ?? Number.POSITIVE_INFINITY;
            expect(Number(r)).toBeLessThanOrEqual(firstUnfinished);
            results.push(Number(r));
          }
          expect(t.inFlight).toBe(offsets.length - finished.size);
          expect(t.tracked).toBe(offsets.length - firstUnfinishedIdx);
        });
        for (let i = 1; i < results.length; i += 1) expect(results[i]).toBeGreaterThan(results[i - 1]!);
        expect(results[results.length - 1]).toBe(offsets[offsets.length - 1]! + 1);
      }),
      { numRuns: 40 },
    );
  });
});
