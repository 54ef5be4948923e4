import { BucketRecordInvalidError } from '../../../src/core/errors';
import { type BucketEntry } from '../../../src/core/bucket-entry';
import { encodeBucketEntry } from '../../../src/core/bucket-entry-codec';
import { heldRecordReader, type RawRecord } from '../../../src/core/held-record';
import { bucketRecord } from '../../../src/core/bucket-record';
import { shardOf } from '../../../src/core/router';
import { parseTopology } from '../../../src/core/topology';
import { loadEntities } from '../../../src/ops/load-entities';
import testTopologyJson from '../../../topics/test.json';

// tbtest: minute 1 s × 12 (guard 3, lead 0, 4 partitions), hour 4 s × 8 (lead 2 s, 2 partitions),
// day 16 s × 6 (lead 4 s, 2 partitions); 4 shards; skew budget = 3 × 1 s.
const topology = parseTopology(testTopologyJson, 'topics/test.json');
const catalogue = loadEntities('entities/default.json');
const read = heldRecordReader(topology, catalogue);
const NOW = 1_700_000_016_000;

function entry(expireAtMs: number, id = '42'): BucketEntry {
  return { entity: 'coupon', transition: 'expired', id, expireAtMs };
}

/** What the writer produces for `e` at clock `writerNow`, as the reader sees it. */
function written(e: BucketEntry, writerNow = NOW): RawRecord {
  const r = bucketRecord(topology, catalogue, e, writerNow);
  return { topic: r.topic, partition: r.partition, offset: '7', key: Buffer.from(r.key), value: r.value, headers: r.headers };
}

function rejection(record: RawRecord, now = NOW): string {
  try {
    read(record, now);
  } catch (err) {
    expect(err).toBeInstanceOf(BucketRecordInvalidError);
    expect((err as BucketRecordInvalidError).code).toBe('BUCKET_INVALID');
    return (err as Error).message;
  }
  throw new Error('the record was accepted');
}

describe('heldRecordReader accepts what the router writes', () => {
  test.each([
    // Released its leadMs (300) early: its entries then wait in the expirer for their own times.
    ['finest tier (release = bucket − its lead)', NOW + 2_500, 'tbtest.minute', NOW + 2_000, NOW + 1_700],
    ['hour tier (release = bucket − lead)', NOW + 12_500, 'tbtest.hour', NOW + 12_000, NOW + 10_000],
    ['day tier', NOW + 40_000, 'tbtest.day', 1_700_000_048_000, 1_700_000_044_000],
  ])('%s', (_name, expireAtMs, topicPrefix, bucketStartMs, releaseAtMs) => {
    const held = read(written(entry(expireAtMs)), NOW);
    expect(held.topic.startsWith(topicPrefix)).toBe(true);
    expect(held).toMatchObject({ bucketStartMs, releaseAtMs, shard: shardOf('42', 4), offset: '7', entry: entry(expireAtMs) });
  });

  test('due lane: released at once', () => {
    expect(read(written(entry(NOW - 5_000)), NOW)).toMatchObject({ topic: 'tbtest.due', releaseAtMs: 0, bucketStartMs: NOW - 5_000 });
  });

  test('the coarsest tier takes entries clamped to its last writable bucket', () => {
    const far = NOW + 10 * 86_400_000;
    const held = read(written(entry(far)), NOW);
    expect(held.topic.startsWith('tbtest.day.')).toBe(true);
    expect(held.bucketStartMs).toBeLessThan(far);
  });

  test('a reader whose clock is behind the writer by the skew budget still accepts', () => {
    expect(() => read(written(entry(NOW + 7_900)), NOW - 3_000)).not.toThrow();
  });
});

describe('heldRecordReader finds misplaced records: released at once, to be routed again, never held', () => {
  const good = written(entry(NOW + 2_500));
  /** The reason a record is misplaced; fails when it is held in place. */
  function misplacement(record: RawRecord, now = NOW): string {
    const held = read(record, now);
    expect(held).toMatchObject({ releaseAtMs: 0, bucketStartMs: held.entry.expireAtMs, shard: shardOf(held.entry.id, 4) });
    expect(held.misplaced).toEqual(expect.any(String));
    return held.misplaced!;
  }

  test('missing bucket_start on a ring', () => {
    expect(misplacement({ ...good, headers: {} })).toMatch(/without a bucket_start/);
  });

  test('bucket_start that is not a number', () => {
    expect(misplacement({ ...good, headers: { bucket_start: 'soon' } })).toMatch(/without a bucket_start header in epoch milliseconds/);
  });

  test('bucket_start not on a bucket boundary (the tier width changed)', () => {
    expect(misplacement({ ...good, headers: { bucket_start: String(NOW + 2_001) } })).toMatch(/not a multiple/);
  });

  test('bucket_start of another ring index (the ring size changed: another topic)', () => {
    expect(misplacement({ ...good, headers: { bucket_start: String(NOW + 3_000) } })).toMatch(/ring index/);
  });

  test('an entry outside its bucket in the finest tier', () => {
    const e = entry(NOW + 2_000 + 12_000 * 5); // same ring index, five laps later
    expect(misplacement({ ...good, value: encodeBucketEntry(e, catalogue) })).toMatch(/outside its bucket/);
  });

  test('a far-future bucket in the finest tier (writer clock far ahead)', () => {
    const far = NOW + 2_000 + 12_000 * 100; // same ring index, a hundred laps later
    expect(misplacement({ ...good, value: encodeBucketEntry(entry(far + 100), catalogue), headers: { bucket_start: String(far) } })).toMatch(
      /beyond the minute horizon/,
    );
  });

  test('a due-lane entry from a clock far ahead', () => {
    const due = written(entry(NOW - 1_000));
    expect(misplacement({ ...due, value: encodeBucketEntry(entry(NOW + 60_000), catalogue) })).toMatch(/due-lane entry is 60000 ms in the future/);
  });
});

describe('heldRecordReader holds in place a record keyed by another shard mapping (the shard count changed)', () => {
  const good = written(entry(NOW + 2_500));
  const inPlace = { releaseAtMs: NOW + 1_700, bucketStartMs: NOW + 2_000, shard: shardOf('42', 4), entry: entry(NOW + 2_500) };

  test("a key that is not the entry shard: the shard is the entry's own under this topology", () => {
    const other = (shardOf('42', 4) + 1) % 4;
    const held = read({ ...good, key: String(other) }, NOW);
    expect(held).toMatchObject(inPlace);
    expect(held.misplaced).toBeUndefined();
  });

  test("a key beyond this topology's shards, or none at all", () => {
    expect(read({ ...good, key: '17' }, NOW)).toMatchObject(inPlace);
    expect(read({ ...good, key: null }, NOW)).toMatchObject(inPlace);
  });

  test('a shard in another partition (the partition count changed)', () => {
    const held = read({ ...good, partition: (good.partition + 1) % 4 }, NOW);
    expect(held).toMatchObject(inPlace);
    expect(held.misplaced).toBeUndefined();
  });
});

describe('heldRecordReader rejects what it cannot read (to the DLQ)', () => {
  const good = written(entry(NOW + 2_500));

  test('a topic that is not a lane of the topology', () => {
    expect(rejection({ ...good, topic: 'other.minute.03' })).toMatch(/not a lane/);
  });

  test('an entry of a transition the catalogue does not know is rejected (CDC_INVALID): it could not be expired here', () => {
    const value = Buffer.from(JSON.stringify({ v: 2, entity: 'coupon', transition: 'frozen', id: '42', expireAtMs: NOW + 2_500 }));
    expect(() => read({ ...good, value }, NOW)).toThrow(
      expect.objectContaining({ code: 'CDC_INVALID', message: 'bucket entry: unknown transition "frozen" of coupon' }),
    );
  });

  test('an undecodable value is rejected too (CDC_INVALID from the entry decoder)', () => {
    expect(() => read({ ...good, value: Buffer.from('nope') }, NOW)).toThrow(/not JSON/);
  });
});
