import type { Producer } from 'kafkajs';
import { createGuardedProducer } from '../../../src/kafka/guarded-producer';
import { createLogger } from '../../../src/ops/logger';

type Fake = { id: number; sends: string[]; disconnected: boolean; failNext: boolean; failConnect: boolean };

function factory() {
  const made: Fake[] = [];
  const plan = { failConnect: false };
  const make = (): Producer => {
    const f: Fake = { id: made.length + 1, sends: [], disconnected: false, failNext: false, failConnect: plan.failConnect };
    made.push(f);
    return {
      connect: async () => {
        if (f.failConnect) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
      },
      disconnect: async () => void (f.disconnected = true),
      send: async (r: { topic: string }) => {
        if (f.failNext) {
          f.failNext = false;
          throw Object.assign(new Error('request timed out'), { name: 'KafkaJSNumberOfRetriesExceeded' });
        }
        f.sends.push(r.topic);
        return [];
      },
      sendBatch: async () => [],
    } as unknown as Producer;
  };
  return { made, make, plan };
}

test('a producer that failed a send is disconnected and never used again; the next send gets a fresh one', async () => {
  const { made, make } = factory();
  const producer = createGuardedProducer(make, { logger: createLogger('silent') });
  await producer.connect();
  await producer.send({ topic: 'a', messages: [] });
  made[0]!.failNext = true;
  await expect(producer.send({ topic: 'b', messages: [] })).rejects.toThrow('request timed out');
  await producer.send({ topic: 'c', messages: [] });
  expect(made.map((f) => [f.id, f.sends, f.disconnected])).toEqual([
    [1, ['a'], true],
    [2, ['c'], false],
  ]);
  expect(producer.generations()).toBe(2);
  await producer.disconnect();
  expect(made[1]!.disconnected).toBe(true);
});

test('a producer that cannot connect is replaced on the next call', async () => {
  const { made, make, plan } = factory();
  plan.failConnect = true;
  const producer = createGuardedProducer(make, { logger: createLogger('silent') });
  await expect(producer.connect()).rejects.toThrow('connection refused');
  plan.failConnect = false;
  await producer.send({ topic: 'a', messages: [] });
  expect(made.map((f) => f.sends)).toEqual([[], ['a']]);
  expect(made[0]!.disconnected).toBe(true);
  await producer.disconnect();
});

test('with the broker down the breaker opens and sends fail fast without touching a producer', async () => {
  const { made, make, plan } = factory();
  plan.failConnect = true;
  const producer = createGuardedProducer(make, { logger: createLogger('silent'), resetTimeoutMs: 60_000 });
  for (let i = 0; i < 5; i += 1) await expect(producer.send({ topic: 'a', messages: [] })).rejects.toThrow();
  expect(producer.breakerState()).toBe('open');
  const before = made.length;
  await expect(producer.send({ topic: 'a', messages: [] })).rejects.toMatchObject({ code: 'EOPENBREAKER' });
  expect(made.length).toBe(before);
  await producer.disconnect();
});

test('a send kafkajs resolves without acknowledging every partition it wrote to fails, and the producer is replaced', async () => {
  // kafkajs keeps the brokers that answered across its retries: partitions that moved to one of
  // them during the send are skipped, and the send resolves with their acknowledgements missing.
  const answers: Array<Array<{ topicName: string; partition: number; errorCode: number }>> = [
    [{ topicName: 'ring', partition: 0, errorCode: 0 }],
    [
      { topicName: 'ring', partition: 0, errorCode: 0 },
      { topicName: 'ring', partition: 1, errorCode: 0 },
      { topicName: 'dlq', partition: 0, errorCode: 0 },
    ],
  ];
  const made: number[] = [];
  const make = (): Producer => {
    made.push(made.length + 1);
    return { connect: async () => undefined, disconnect: async () => undefined, sendBatch: async () => answers.shift() } as unknown as Producer;
  };
  const producer = createGuardedProducer(make, { logger: createLogger('silent') });
  const batch = {
    topicMessages: [
      {
        topic: 'ring',
        messages: [
          { partition: 0, value: 'a' },
          { partition: 1, value: 'b' },
        ],
      },
      { topic: 'dlq', messages: [{ key: 'k', value: 'c' }] },
    ],
  };
  await expect(producer.sendBatch(batch)).rejects.toMatchObject({ retriable: true, details: { missing: ['dlq/*', 'ring/1'] } });
  await expect(producer.sendBatch(batch)).resolves.toHaveLength(3);
  expect(made).toEqual([1, 2]);
  await producer.disconnect();
});
