import type { KafkaMessage } from 'kafkajs';
import { decodeBucketEntry } from '../../../src/core/bucket-entry-codec';
import { entityOf, type Entity, type EntityCatalogue } from '../../../src/core/entity-catalogue';
import type { CdcTopic } from '../../../src/ingest/cdc-topics';
import { parseEntityFile } from '../../../src/core/entity-file';
import { Repartitioner, type RepartitionerOptions } from '../../../src/ingest/repartitioner';
import { parseTopology } from '../../../src/core/topology';
import { loadEntities } from '../../../src/ops/load-entities';
import type { DlqRecord } from '../../../src/kafka/dlq-writer';
import { createLogger } from '../../../src/ops/logger';
import testTopologyJson from '../../../topics/test.json';
import { fakeConsumer, message } from '../../support/fake-consumer';
import { fakeProducer } from '../../support/fake-producer';
import { waitFor } from '../../support/wait-for';

const topology = parseTopology(testTopologyJson, 'topics/test.json');
const defaults = loadEntities('entities/default.json');
const NOW = 1_700_000_016_000;
const cdc = 'tbcdc.timebucket.coupons';

function change(offset: number, id: number, expireAtMs: number): KafkaMessage {
  const after = { id, user_id: 1, status: 'ACTIVE', expire_time: expireAtMs };
  // Committed now: the shipped file's fire points (3d, 1d, 30m before) are past, so each change is one entry.
  return message(offset, { value: Buffer.from(JSON.stringify({ op: 'c', before: null, after, source: { ts_ms: NOW } })) });
}

/** The fake of the stage being started, for callbacks that run during start(). */
const current: { consumer?: ReturnType<typeof fakeConsumer> } = {};

async function started(startFrom: 'latest' | 'earliest' = 'latest', pinNewGroup?: () => Promise<string>, catalogue: EntityCatalogue = defaults) {
  const consumer = fakeConsumer();
  current.consumer = consumer;
  const producer = fakeProducer();
  const dlqCalls: DlqRecord[][] = [];
  const stage = new Repartitioner({
    consumer: consumer.consumer,
    group: 'g.repartitioner',
    producer: producer.producer,
    cdcTopics: { [cdc]: oneTableTopic(cdc, catalogue.entities[0]!) },
    catalogue,
    topology,
    dlq: { send: async (r) => void dlqCalls.push([r]), sendAll: async (rs) => void dlqCalls.push([...rs]) },
    clock: { now: () => NOW },
    logger: createLogger('silent'),
    listTopics: async () => [cdc],
    stallMs: 60_000,
    startFrom,
    ...(pinNewGroup && { pinNewGroup }),
  });
  await stage.start();
  // run() is called once the CDC topics exist (checked asynchronously).
  await waitFor(
    'the stage to run',
    () =>
      consumer
        .feed(cdc, 0, [])
        .then(() => true)
        .catch(() => undefined),
    { timeoutMs: 2_000, intervalMs: 10 },
  );
  return { stage, consumer, producer, dlqCalls };
}

test('a poison storm costs one DLQ write per batch, heartbeats as it decodes, and the good records still go out', async () => {
  const { stage, consumer, producer, dlqCalls } = await started();
  const messages = [
    ...Array.from({ length: 2_000 }, (_, i) => message(i, { value: Buffer.from(`not json ${i}`) })),
    ...Array.from({ length: 10 }, (_, i) => change(2_000 + i, 100 + i, NOW + 5_000)),
  ];
  const seen = await consumer.feed(cdc, 0, messages);
  expect(dlqCalls).toHaveLength(1);
  expect(dlqCalls[0]!.map((r) => r.message.offset)).toEqual(Array.from({ length: 2_000 }, (_, i) => String(i)));
  expect(dlqCalls[0]![0]!.error).toMatchObject({ code: 'CDC_UNDECODABLE' });
  // 2,010 records decoded: a heartbeat every 500 and one at the end.
  expect(seen.heartbeats).toBe(5);
  expect(producer.calls).toHaveLength(1);
  expect(producer.calls[0]!.topicMessages!.flatMap((t) => t.messages)).toHaveLength(10);
  await stage.stop();
});

test('ids beyond 2^53 are routed exactly', async () => {
  const { stage, consumer, producer, dlqCalls } = await started();
  const text = `{"op":"c","before":null,"after":{"id":9223372036854775807,"user_id":1,"status":"ACTIVE","expire_time":${NOW + 5_000}},"source":{}}`;
  await consumer.feed(cdc, 0, [message(0, { value: Buffer.from(text) })]);
  expect(dlqCalls).toHaveLength(0);
  const [sent] = producer.calls[0]!.topicMessages!.flatMap((t) => t.messages);
  expect(JSON.parse(sent!.value!.toString())).toMatchObject({ id: '9223372036854775807' });
  await stage.stop();
});

test.each(['latest', 'earliest'] as const)('a group without committed offsets starts at the %s CDC offset', async (startFrom) => {
  const { stage, consumer } = await started(startFrom);
  expect(consumer.subscriptions).toEqual([{ topics: [cdc], fromBeginning: startFrom === 'earliest' }]);
  await stage.stop();
});

test.each([
  ['latest', 1],
  ['earliest', 0],
] as const)('with %s, a new group is pinned %i time(s), before it subscribes', async (startFrom, pins) => {
  const order: string[] = [];
  const { stage, consumer } = await started(startFrom, async () => {
    order.push(`pin (subscriptions so far: ${current.consumer!.subscriptions.length})`);
    return 'pinned';
  });
  expect(order).toEqual(pins === 1 ? ['pin (subscriptions so far: 0)'] : []);
  expect(consumer.subscriptions).toHaveLength(1);
  await stage.stop();
});

test('a failed pin does not stop the stage: it subscribes and runs', async () => {
  const { stage, consumer } = await started('latest', async () => Promise.reject(new Error('broker busy')));
  expect(consumer.subscriptions).toHaveLength(1);
  await stage.stop();
});

test('CDC lag: what each held partition has behind its last batch, summed; a rebalance forgets partitions it may have lost', async () => {
  const { stage, consumer } = await started();
  expect(stage.cdcLag()).toBe(0);
  // Offsets 0-9 read of 0-109 (high watermark 110): 100 behind on partition 0.
  await consumer.feed(
    cdc,
    0,
    Array.from({ length: 10 }, (_, i) => change(i, 100 + i, NOW + 5_000)),
    '110',
  );
  await consumer.feed(cdc, 1, [change(40, 300, NOW + 5_000)], '46');
  expect(stage.cdcLag()).toBe(105);
  // Partition 0 caught up: its figure drops to 0, partition 1 keeps its last.
  await consumer.feed(cdc, 0, [change(109, 400, NOW + 5_000)], '110');
  expect(stage.cdcLag()).toBe(5);
  consumer.joinGroup({ [cdc]: [0] });
  expect(stage.cdcLag()).toBe(0);
  await stage.stop();
});

test("CDC lag while a batch cannot be routed: the whole batch counts as behind, not the last success's figure", async () => {
  const { stage, consumer, producer } = await started();
  await consumer.feed(cdc, 0, [change(0, 100, NOW + 5_000)], '1');
  expect(stage.cdcLag()).toBe(0);
  producer.respond = () => Promise.reject(new Error('injected: broker unavailable'));
  await expect(
    consumer.feed(
      cdc,
      0,
      Array.from({ length: 10 }, (_, i) => change(1 + i, 200 + i, NOW + 5_000)),
      '51',
    ),
  ).rejects.toThrow(/injected/);
  expect(stage.cdcLag()).toBe(50);
  await stage.stop();
});

describe('catalogue-driven routing', () => {
  const event = (type: string) => ({
    type,
    ceType: `shop.${type.toLowerCase()}`,
    avroName: `shop.events.E${type}`,
    idField: 'row_id',
    summary: `${type} happened.`,
  });
  // Mapped to the same test topic: an entity whose coupon expires free or locked, and whose lock times out.
  const vouchers = parseEntityFile(
    {
      entities: [
        {
          ...{ name: 'voucher', table: 'coupons', id: 'id' },
          status: { column: 'state', type: 'string', values: ['待使用', '已锁定', '已过期'] },
          transitions: [
            {
              name: 'expired',
              from: ['待使用', '已锁定'],
              to: '已过期',
              due: { column: 'expire_time', kind: 'datetime' },
              index: 'idx_e',
              event: event('VOUCHER_EXPIRED'),
            },
            {
              name: 'lock_timeout',
              from: ['已锁定'],
              to: '待使用',
              due: { column: 'lock_expire_time', kind: 'epoch_ms' },
              index: 'idx_l',
              event: event('VOUCHER_LOCK_TIMED_OUT'),
            },
          ],
        },
      ],
    },
    'inline test entities',
  );

  test('one change that makes two transitions due yields two entries, each routed by its own time', async () => {
    const { stage, consumer, producer, dlqCalls } = await started('latest', undefined, vouchers);
    const after = { id: 7, state: '已锁定', expire_time: NOW + 30_000, lock_expire_time: NOW + 2_000 };
    await consumer.feed(cdc, 0, [message(0, { value: Buffer.from(JSON.stringify({ op: 'c', before: null, after, source: {} })) })]);
    expect(dlqCalls).toHaveLength(0);
    const sent = producer.calls[0]!.topicMessages!.flatMap((t) =>
      t.messages.map((m) => ({ topic: t.topic, entry: decodeBucketEntry(m.value as Buffer, vouchers) })),
    );
    expect(sent).toEqual([
      { topic: expect.stringMatching(/^tbtest\.(hour|day)\./), entry: { entity: 'voucher', transition: 'expired', id: '7', expireAtMs: NOW + 30_000 } },
      { topic: expect.stringMatching(/^tbtest\.minute\./), entry: { entity: 'voucher', transition: 'lock_timeout', id: '7', expireAtMs: NOW + 2_000 } },
    ]);
    await stage.stop();
  });

  test('a state the file does not list goes to the DLQ as CDC_INVALID; the rest of the batch is routed', async () => {
    const { stage, consumer, producer, dlqCalls } = await started('latest', undefined, vouchers);
    const row = (id: number, state: string) => ({ op: 'c', before: null, after: { id, state, expire_time: NOW + 5_000, lock_expire_time: null }, source: {} });
    await consumer.feed(cdc, 0, [
      message(0, { value: Buffer.from(JSON.stringify(row(1, '已作废'))) }),
      message(1, { value: Buffer.from(JSON.stringify(row(2, '待使用'))) }),
    ]);
    expect(dlqCalls).toEqual([
      [expect.objectContaining({ error: expect.objectContaining({ code: 'CDC_INVALID', message: 'after.state: unknown voucher state "已作废"' }) })],
    ]);
    expect(producer.calls[0]!.topicMessages!.flatMap((t) => t.messages)).toHaveLength(1);
    await stage.stop();
  });

  test('records of a topic without an entity go to the DLQ as CDC_INVALID, not a crash', async () => {
    const { stage, consumer, producer, dlqCalls } = await started();
    await consumer.feed('tbcdc.timebucket.users', 0, [change(0, 1, NOW + 5_000)]);
    expect(dlqCalls).toEqual([
      [expect.objectContaining({ error: expect.objectContaining({ code: 'CDC_INVALID', message: 'no entity for topic tbcdc.timebucket.users' }) })],
    ]);
    expect(producer.calls).toHaveLength(0);
    await stage.stop();
  });

  test("an entity that is not the catalogue's is refused at construction (every encode of it would fail)", () => {
    const options = {
      cdcTopics: { [cdc]: oneTableTopic(cdc, entityOf(vouchers, 'voucher')) },
      catalogue: defaults,
    } as Partial<RepartitionerOptions> as RepartitionerOptions;
    expect(() => new Repartitioner(options)).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining(`cdcTopics.${cdc}: entity 'voucher' is not the catalogue's`) }),
    );
  });
});

/** The CDC topic of an entity with one table on the main database. */
function oneTableTopic(topic: string, entity: Entity): CdcTopic {
  return { topic, entity, database: 'main', tables: new Map(entity.locations.map((l) => [l.table, l])), routed: false };
}
