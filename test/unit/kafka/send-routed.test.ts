import type { ProducerBatch } from 'kafkajs';
import { appendBudgetMs, sendRouted } from '../../../src/kafka/send-routed';
import { parseTopology } from '../../../src/core/topology';
import type { BucketEntry } from '../../../src/core/bucket-entry';
import { bucketRecord } from '../../../src/core/bucket-record';
import { createLogger } from '../../../src/ops/logger';
import { loadEntities } from '../../../src/ops/load-entities';
import testTopologyJson from '../../../topics/test.json';
import { fakeProducer } from '../../support/fake-producer';

// tbtest: minute 1 s × 12, guard 3 → the I1 slack is 3 s, the append budget half of it.
const topology = parseTopology(testTopologyJson, 'topics/test.json');
const catalogue = loadEntities('entities/default.json');
const T0 = 1_700_000_016_000;
const entry = (id: string, expireAtMs: number): BucketEntry => ({ entity: 'coupon', transition: 'expired', id, expireAtMs });
const topicsOf = (b: ProducerBatch) => b.topicMessages!.flatMap((t) => t.messages.map(() => t.topic));

test('the budget is half of guard × finest width', () => {
  expect(appendBudgetMs(topology)).toBe(1_500);
});

test('a send within the budget is sent once', async () => {
  let now = T0;
  const fake = fakeProducer();
  fake.respond = async () => {
    now += 1_500;
    return [];
  };
  const records = await sendRouted(
    { producer: fake.producer, topology, catalogue, clock: { now: () => now }, appendBudgetMs: 1_500, logger: createLogger('silent') },
    [entry('1', T0 + 5_000), entry('2', T0 - 1)],
  );
  expect(fake.calls).toHaveLength(1);
  expect(records.map((r) => r.topic)).toEqual(['tbtest.minute.05', 'tbtest.due']);
});

test('a send that outlasted the budget re-routes its ring entries at the new clock, not its due ones', async () => {
  let now = T0;
  const fake = fakeProducer();
  fake.respond = async (_call, index) => {
    now += index === 0 ? 4_000 : 10; // the first send's retries took 4 s
    return [];
  };
  const records = await sendRouted(
    { producer: fake.producer, topology, catalogue, clock: { now: () => now }, appendBudgetMs: 1_500, logger: createLogger('silent') },
    [entry('1', T0 + 5_000), entry('2', T0 - 1), entry('3', T0 + 9_000)],
  );
  expect(fake.calls).toHaveLength(2);
  const at = (e: BucketEntry, now: number) => bucketRecord(topology, catalogue, e, now).topic;
  expect(topicsOf(fake.calls[0]!).sort()).toEqual([at(entry('1', T0 + 5_000), T0), at(entry('3', T0 + 9_000), T0), 'tbtest.due'].sort());
  // Routed again at T0 + 4 s: entry 3 is now within the minute horizon (it was in the hour tier).
  expect(at(entry('3', T0 + 9_000), T0)).toMatch(/^tbtest\.hour\./);
  expect(topicsOf(fake.calls[1]!).sort()).toEqual(['tbtest.minute.05', 'tbtest.minute.09']);
  expect(records).toHaveLength(3);
});

test('a failed send throws and re-routes nothing by itself (the caller retries the batch)', async () => {
  const fake = fakeProducer();
  fake.respond = async () => {
    throw new Error('broker gone');
  };
  await expect(
    sendRouted({ producer: fake.producer, topology, catalogue, clock: { now: () => T0 }, appendBudgetMs: 1_500, logger: createLogger('silent') }, [
      entry('1', T0 + 5_000),
    ]),
  ).rejects.toThrow('broker gone');
  expect(fake.calls).toHaveLength(1);
});
