import type { KafkaMessage, ProducerRecord } from 'kafkajs';
import { CdcInvalidError, ErrorCodes } from '../../../src/core/errors';
import { createDlqWriter } from '../../../src/kafka/dlq-writer';
import { createLogger } from '../../../src/ops/logger';

function source(offset: number, value = 'x'): KafkaMessage {
  return {
    key: Buffer.from(`k${offset}`),
    value: Buffer.from(value),
    timestamp: '1700000000123',
    attributes: 0,
    offset: String(offset),
    headers: { original: Buffer.from('kept') },
  } as KafkaMessage;
}

function harness(partitions?: number) {
  const sends: ProducerRecord[] = [];
  const counted: Array<[string, string]> = [];
  const dlq = createDlqWriter({
    producer: {
      send: async (r: ProducerRecord) => {
        sends.push(r);
        return [];
      },
    },
    topic: 'tb.dlq',
    logger: createLogger('silent'),
    otherCode: 'CDC_UNDECODABLE',
    onDeadLetter: (topic, code) => void counted.push([topic, code]),
    partitions,
  });
  return { dlq, sends, counted };
}

test('a DLQ record keeps the key and headers and says why and where from', async () => {
  const h = harness();
  await h.dlq.send({ topic: 'cdc.coupons', partition: 3, message: source(41), error: new CdcInvalidError('after.id: bad') });
  expect(h.sends).toHaveLength(1);
  const [m] = h.sends[0]!.messages;
  expect(h.sends[0]!.topic).toBe('tb.dlq');
  expect(h.sends[0]!.acks).toBe(-1);
  expect(m!.key).toEqual(Buffer.from('k41'));
  expect(m!.value).toEqual(Buffer.from('x'));
  expect(m!.headers).toEqual({
    original: Buffer.from('kept'),
    dlq_reason: 'after.id: bad',
    dlq_error_code: 'CDC_INVALID',
    dlq_source_topic: 'cdc.coupons',
    dlq_source_partition: '3',
    dlq_source_offset: '41',
    dlq_source_timestamp: '1700000000123',
  });
  expect(h.counted).toEqual([['cdc.coupons', 'CDC_INVALID']]);
});

test("an error that is not ours gets the stage's own code, one of the listed codes", async () => {
  const h = harness();
  await h.dlq.send({ topic: 't', partition: 0, message: source(1), error: new SyntaxError('nope') });
  expect(h.sends[0]!.messages[0]!.headers!['dlq_error_code']).toBe('CDC_UNDECODABLE');
  expect(ErrorCodes).toContain('CDC_UNDECODABLE');
  expect(h.counted).toEqual([['t', 'CDC_UNDECODABLE']]);
});

test('a storm goes out in few sends, each under the size cap, every record counted', async () => {
  const h = harness();
  const big = 'v'.repeat(10_000);
  const records = Array.from({ length: 300 }, (_, i) => ({ topic: 'cdc', partition: 0, message: source(i, big), error: new CdcInvalidError('bad') }));
  await h.dlq.sendAll(records);
  // 300 × ~10.5 kB in sends of at most 512 kB: 7 sends, not 300.
  expect(h.sends.length).toBe(7);
  expect(h.sends.flatMap((s) => s.messages.map((m) => m.headers!['dlq_source_offset']))).toEqual(records.map((_, i) => String(i)));
  expect(h.counted).toHaveLength(300);
});

test("given the topic's partitions, every dead letter is placed explicitly, where the client's key hash would put it", async () => {
  const { dlq, sends } = harness(4);
  const records = Array.from({ length: 40 }, (_, i) => ({ topic: 'cdc.coupons', partition: 0, message: source(i % 20), error: new Error('bad') }));
  await dlq.sendAll(records);
  const messages = sends.flatMap((s) => s.messages);
  expect(messages).toHaveLength(40);
  for (const m of messages) expect([0, 1, 2, 3]).toContain(m.partition);
  // The same key, the same partition; and more than one partition over twenty keys.
  const byKey = new Map<string, Set<number>>();
  for (const m of messages) byKey.set(String(m.key), (byKey.get(String(m.key)) ?? new Set()).add(m.partition!));
  expect([...byKey.values()].every((p) => p.size === 1)).toBe(true);
  expect(new Set(messages.map((m) => m.partition)).size).toBeGreaterThan(1);
});
