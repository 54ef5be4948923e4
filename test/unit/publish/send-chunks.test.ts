import fc from 'fast-check';
import type { Message } from 'kafkajs';
import { recordBytes, sendChunks } from '../../../src/publish/send-chunks';
import { eventHeaders } from '../../../src/publish/event-headers';

const message = (valueBytes: number, key = '123456789'): Message => ({
  key,
  value: Buffer.alloc(valueBytes),
  headers: { ...eventHeaders({ eventKey: `coupon-expired-${key}-1000`, event: { type: 'COUPON_EXPIRED', ceType: 'timebucket.coupon.expired' }, entityId: key, occurredAtMs: 1_000, dataSchema: 'http://registry:8081/schemas/ids/1' }) },
});

test('recordBytes bounds key, value, every header and the per-record varints', () => {
  const m = message(150);
  const headerBytes = Object.entries(m.headers!).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(String(v)), 0);
  const payload = 9 + 150 + headerBytes;
  expect(recordBytes(m)).toBeGreaterThan(payload);
  expect(recordBytes(m)).toBeLessThanOrEqual(payload + 41 + 10 * Object.keys(m.headers!).length);
  expect(recordBytes({ key: null, value: null })).toBe(41);
  // Multi-byte characters count as bytes, not characters.
  expect(recordBytes({ key: 'é', value: null })).toBe(43);
});

test('a typical event is ~500 bytes: 2000 of them need two requests under 768 KiB, 500 one', () => {
  const size = recordBytes(message(150));
  expect(size).toBeGreaterThan(400);
  expect(size).toBeLessThan(650);
  const items = (n: number) => Array.from({ length: n }, (_, i) => ({ topic: 't', message: message(150, String(i)) }));
  expect(sendChunks(items(500), 768 * 1024)).toHaveLength(1);
  expect(sendChunks(items(2000), 768 * 1024)).toHaveLength(2);
});

test('chunks keep each topic in outbox order, stay under the budget, and lose or repeat nothing', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ topic: fc.constantFrom('a', 'b', 'c'), bytes: fc.integer({ min: 0, max: 3_000 }) }), { maxLength: 200 }),
      fc.integer({ min: 1_024, max: 20_000 }),
      (specs, budget) => {
        const items = specs.map((s, i) => ({ topic: s.topic, seq: i, message: message(s.bytes, String(i)) }));
        const chunks = sendChunks(items, budget);
        // Every item exactly once, in its chunk's topic.
        expect(chunks.flatMap((c) => c.items.map((i) => i.seq)).sort((x, y) => x - y)).toEqual(items.map((i) => i.seq));
        for (const c of chunks) for (const i of c.items) expect(i.topic).toBe(c.topic);
        // Per topic, chunk after chunk, the original order.
        for (const topic of ['a', 'b', 'c']) {
          const sent = chunks.filter((c) => c.topic === topic).flatMap((c) => c.items.map((i) => i.seq));
          expect(sent).toEqual(items.filter((i) => i.topic === topic).map((i) => i.seq));
        }
        // Under the budget, unless one item alone is over it; and never split needlessly.
        for (const c of chunks) {
          const total = c.items.reduce((sum, i) => sum + recordBytes(i.message), 0);
          if (c.items.length > 1) expect(total).toBeLessThanOrEqual(budget);
        }
        for (let k = 1; k < chunks.length; k += 1) {
          const [prev, next] = [chunks[k - 1]!, chunks[k]!];
          if (prev.topic !== next.topic) continue;
          const prevBytes = prev.items.reduce((sum, i) => sum + recordBytes(i.message), 0);
          expect(prevBytes + recordBytes(next.items[0]!.message)).toBeGreaterThan(budget);
        }
      },
    ),
  );
});

test('an item over the budget on its own is sent on its own, not dropped', () => {
  const big = { topic: 't', message: message(5_000) };
  const small = { topic: 't', message: message(10) };
  expect(sendChunks([small, big, small], 2_000).map((c) => c.items)).toEqual([[small], [big], [small]]);
});
