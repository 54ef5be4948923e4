import { type BucketEntry } from '../../../src/core/bucket-entry';
import { decodeBucketEntry } from '../../../src/core/bucket-entry-codec';
import { bucketRecord, byTopic } from '../../../src/core/bucket-record';
import { parseEntityFile } from '../../../src/core/entity-file';
import { shardOf } from '../../../src/core/router';
import { parseTopology } from '../../../src/core/topology';
import { loadEntities } from '../../../src/ops/load-entities';
import testTopologyJson from '../../../topics/test.json';

// tbtest: 4 shards; minute 1 s × 12 (4 partitions), hour 4 s × 8 (2), day 16 s × 6 (2), due (4).
const topology = parseTopology(testTopologyJson, 'topics/test.json');
const catalogue = loadEntities('entities/default.json');
// A multiple of 16 s, so minute, hour and day buckets all start here; ring indexes at T0:
// minute (T0/1000) % 12 = 8, hour (T0/4000) % 8 = 0, day (T0/16000) % 6 = 2.
const T0 = 1_700_000_000_000;

function idOfShard(shard: number): string {
  for (let i = 1; ; i += 1) if (shardOf(String(i), topology.shards) === shard) return String(i);
}

const entry = (id: string, expireAtMs: number, entity = 'coupon'): BucketEntry => ({
  entity,
  transition: entity === 'coupon' ? 'expired' : 'cancelled',
  id,
  expireAtMs,
});

describe('bucketRecord', () => {
  test('finest tier: topic of the bucket, key = shard, partition = shard % 4, bucket_start and tier headers', () => {
    const id = idOfShard(3);
    const e = entry(id, T0 + 2_500);
    const r = bucketRecord(topology, catalogue, e, T0);
    expect(r).toEqual({
      topic: 'tbtest.minute.10',
      partition: 3,
      key: '3',
      value: expect.any(Buffer),
      headers: { bucket_start: String(T0 + 2_000), tier: 'minute' },
    });
    expect(decodeBucketEntry(r.value, catalogue)).toEqual(e);
  });

  test('hour tier: partition = shard % 2 of that lane', () => {
    const e = entry(idOfShard(3), T0 + 20_000, 'order');
    const r = bucketRecord(topology, catalogue, e, T0);
    expect(r.topic).toBe('tbtest.hour.05');
    expect(r.key).toBe('3');
    expect(r.partition).toBe(1);
    expect(r.headers).toEqual({ bucket_start: String(T0 + 20_000), tier: 'hour' });
    expect(decodeBucketEntry(r.value, catalogue)).toEqual(e);
  });

  test('day tier: bucket start is the day-bucket start, not the expire time', () => {
    const e = entry(idOfShard(2), T0 + 40_000);
    const r = bucketRecord(topology, catalogue, e, T0);
    expect(r.topic).toBe('tbtest.day.04');
    expect(r.key).toBe('2');
    expect(r.partition).toBe(0);
    expect(r.headers).toEqual({ bucket_start: String(T0 + 32_000), tier: 'day' });
  });

  test('overdue entry → due lane, tier header "due", no bucket_start, partition = shard % 4', () => {
    const e = entry(idOfShard(1), T0 - 1);
    const r = bucketRecord(topology, catalogue, e, T0);
    expect(r.topic).toBe('tbtest.due');
    expect(r.key).toBe('1');
    expect(r.partition).toBe(1);
    expect(r.headers).toEqual({ tier: 'due' });
    expect(decodeBucketEntry(r.value, catalogue)).toEqual(e);
  });

  test('the writer clock decides: the same entry is ringed before its time and due after it', () => {
    const e = entry('42', T0 + 500);
    expect(bucketRecord(topology, catalogue, e, T0).topic).toBe('tbtest.minute.08');
    expect(bucketRecord(topology, catalogue, e, T0 + 500).topic).toBe('tbtest.due');
  });
});

test('an entry of a second transition is written as v2 and read back whole', () => {
  const event = (type: string) => ({ type, ceType: `t.${type.toLowerCase()}`, avroName: `t.E${type}`, idField: 'row_id', summary: 's' });
  const due = (column: string) => ({ column, kind: 'datetime' });
  const two = parseEntityFile(
    {
      entities: [
        {
          ...{ name: 'voucher', table: 'vouchers', id: 'id', status: { column: 'state', type: 'string' } },
          transitions: [
            { name: 'expired', from: ['待使用', '已锁定'], to: '已过期', due: due('expire_time'), index: 'i1', event: event('A') },
            { name: 'lock_timeout', from: ['已锁定'], to: '待使用', due: due('lock_expire_time'), index: 'i2', event: event('B') },
          ],
        },
      ],
    },
    'inline',
  );
  const e: BucketEntry = { entity: 'voucher', transition: 'lock_timeout', id: '42', expireAtMs: T0 + 500 };
  const r = bucketRecord(topology, two, e, T0);
  expect(JSON.parse(r.value.toString())).toEqual({ v: 2, ...e });
  expect(decodeBucketEntry(r.value, two)).toEqual(e);
});

describe('byTopic', () => {
  test('groups records per topic in first-seen order and drops the topic from each message', () => {
    const a = bucketRecord(topology, catalogue, entry('1', T0 + 2_500), T0);
    const b = bucketRecord(topology, catalogue, entry('2', T0 - 1), T0);
    const c = bucketRecord(topology, catalogue, entry('3', T0 + 2_900), T0);
    const grouped = byTopic([a, b, c]);
    expect(grouped.map((g) => g.topic)).toEqual(['tbtest.minute.10', 'tbtest.due']);
    expect(grouped[0]!.messages).toHaveLength(2);
    expect(grouped[0]!.messages.map((m) => decodeBucketEntry(m.value, catalogue).id)).toEqual(['1', '3']);
    expect(grouped[0]!.messages[0]).not.toHaveProperty('topic');
    expect(grouped[1]!.messages).toEqual([{ partition: b.partition, key: b.key, value: b.value, headers: { tier: 'due' } }]);
  });

  test('no records → no topics', () => {
    expect(byTopic([])).toEqual([]);
  });
});
