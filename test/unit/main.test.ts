import { parseTopology } from '../../src/core/topology';
import { releasePolicy, ringTopics } from '../../src/main';
import testTopologyJson from '../../topics/test.json';
import { heldMessage } from '../support/fake-held-message';

// tbtest: minute 1 s × 12 (lead 0), hour 4 s × 8 (lead 2 s), day 16 s × 6 (lead 4 s).
const topology = parseTopology(testTopologyJson, 'topics/test.json');
const B = 1_700_000_016_000;

describe('releasePolicy', () => {
  const releaseAt = releasePolicy(topology);

  test('due lane → release at once (0)', () => {
    expect(releaseAt(heldMessage({ topic: 'tbtest.due', bucketStartMs: B }))).toBe(0);
  });

  test('finest tier → the bucket start (its lead is 0)', () => {
    expect(releaseAt(heldMessage({ topic: 'tbtest.minute.03', bucketStartMs: B }))).toBe(B);
  });

  test.each([
    ['tbtest.hour.01', B - 2_000],
    ['tbtest.day.05', B - 4_000],
  ])('coarser tier %s → bucket start − lead', (topic, expected) => {
    expect(releaseAt(heldMessage({ topic, bucketStartMs: B }))).toBe(expected);
  });

  test('a topic the topology does not declare → 0', () => {
    expect(releaseAt(heldMessage({ topic: 'other.minute.03', bucketStartMs: B }))).toBe(0);
  });
});

describe('ringTopics', () => {
  test('finest tier → every minute topic', () => {
    expect(ringTopics(topology, [0])).toEqual(Array.from({ length: 12 }, (_, i) => `tbtest.minute.${String(i).padStart(2, '0')}`));
  });

  test('coarser tiers → every hour then every day topic', () => {
    expect(ringTopics(topology, [1, 2])).toEqual([
      ...['00', '01', '02', '03', '04', '05', '06', '07'].map((i) => `tbtest.hour.${i}`),
      ...['00', '01', '02', '03', '04', '05'].map((i) => `tbtest.day.${i}`),
    ]);
  });

  test('no tiers → no topics', () => {
    expect(ringTopics(topology, [])).toEqual([]);
  });
});
