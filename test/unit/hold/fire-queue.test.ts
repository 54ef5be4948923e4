import fc from 'fast-check';
import { FireQueue } from '../../../src/hold/fire-queue';

function queueOf(items: ReadonlyArray<[number, string]>): FireQueue<string> {
  const q = new FireQueue<string>();
  for (const [at, item] of items) q.push(at, item);
  return q;
}

describe('FireQueue', () => {
  test('empty queue: size 0, no peek, nothing due', () => {
    const q = new FireQueue<string>();
    expect(q.size).toBe(0);
    expect(q.peekAt()).toBeUndefined();
    expect(q.popDue(Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  test('popDue returns only items with at <= now, earliest first', () => {
    const q = queueOf([
      [30, 'c'],
      [10, 'a'],
      [40, 'd'],
      [20, 'b'],
    ]);
    expect(q.peekAt()).toBe(10);
    expect(q.popDue(9)).toEqual([]);
    expect(q.popDue(30)).toEqual(['a', 'b', 'c']);
    expect(q.size).toBe(1);
    expect(q.peekAt()).toBe(40);
  });

  test('ties fire in insertion order (FIFO)', () => {
    const q = queueOf([
      [5, 'x1'],
      [1, 'early'],
      [5, 'x2'],
      [5, 'x3'],
      [5, 'x4'],
      [5, 'x5'],
    ]);
    expect(q.popDue(5)).toEqual(['early', 'x1', 'x2', 'x3', 'x4', 'x5']);
  });

  test('limit caps how many are popped; the rest stay for the next call', () => {
    const q = queueOf([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    expect(q.popDue(10, 2)).toEqual(['a', 'b']);
    expect(q.size).toBe(1);
    expect(q.popDue(10, 0)).toEqual([]);
    expect(q.popDue(10, 5)).toEqual(['c']);
  });

  test('retain drops items and keeps heap order and FIFO ties', () => {
    const q = queueOf([
      [3, 'keep-3'],
      [1, 'drop-1'],
      [2, 'keep-2a'],
      [2, 'drop-2'],
      [2, 'keep-2b'],
      [0, 'keep-0'],
    ]);
    q.retain((item) => item.startsWith('keep'));
    expect(q.size).toBe(4);
    expect(q.peekAt()).toBe(0);
    expect(q.popDue(100)).toEqual(['keep-0', 'keep-2a', 'keep-2b', 'keep-3']);
  });

  test('retain(() => false) empties the queue', () => {
    const q = queueOf([
      [1, 'a'],
      [2, 'b'],
    ]);
    q.retain(() => false);
    expect(q.size).toBe(0);
    expect(q.peekAt()).toBeUndefined();
  });

  type Op = { kind: 'push'; at: number } | { kind: 'pop'; now: number; limit: number } | { kind: 'retain'; mod: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('push' as const), at: fc.integer({ min: 0, max: 50 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('pop' as const), now: fc.integer({ min: -1, max: 60 }), limit: fc.integer({ min: 0, max: 8 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('retain' as const), mod: fc.integer({ min: 2, max: 4 }) }) },
  );

  test('countDue counts the due items, with or without undue ones behind them', () => {
    const q = queueOf([
      [30, 'c'],
      [10, 'a'],
      [20, 'b'],
    ]);
    expect(q.countDue(9)).toBe(0);
    expect(q.countDue(20)).toBe(2);
    expect(q.countDue(30)).toBe(3);
    q.popDue(30);
    q.push(5, 'd');
    expect(q.countDue(4)).toBe(0);
    expect(q.countDue(5)).toBe(1);
  });

  test('property: behaves like a stable-sorted array', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const q = new FireQueue<number>();
        let model: Array<{ at: number; id: number }> = [];
        let nextId = 0;
        for (const o of ops) {
          if (o.kind === 'push') {
            const id = nextId++;
            q.push(o.at, id);
            model.push({ at: o.at, id });
            // Stable sort by time keeps insertion order for ties.
            model.sort((a, b) => a.at - b.at);
          } else if (o.kind === 'pop') {
            let n = 0;
            while (n < o.limit && n < model.length && model[n]!.at <= o.now) n += 1;
            const expected = model.slice(0, n).map((e) => e.id);
            model = model.slice(n);
            expect(q.popDue(o.now, o.limit)).toEqual(expected);
          } else {
            q.retain((id) => id % o.mod !== 0);
            model = model.filter((e) => e.id % o.mod !== 0);
          }
          expect(q.size).toBe(model.length);
          expect(q.peekAt()).toBe(model[0]?.at);
          for (const now of [-1, 7, 25, 50]) expect(q.countDue(now)).toBe(model.filter((e) => e.at <= now).length);
        }
        expect(q.popDue(Number.POSITIVE_INFINITY)).toEqual(model.map((e) => e.id));
      }),
    );
  });
});
