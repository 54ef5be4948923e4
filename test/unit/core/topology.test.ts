import { ConfigError } from '../../../src/core/errors';
import {
  declaredTopics,
  dlqTopic,
  dueTopic,
  horizonMs,
  parseTopic,
  waitingTopic,
  parseTopology,
  partitionOfShard,
  ringIndex,
  ringTopic,
  ringTopics,
  type Tier,
} from '../../../src/core/topology';
import testTopologyJson from '../../../topics/test.json';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const productionJson = {
  prefix: 'tb',
  shards: 16,
  tiers: [
    { name: 'minute', widthMs: MIN, ring: 120, guard: 2, leadMs: 0, partitions: 16 },
    { name: 'hour', widthMs: HOUR, ring: 48, guard: 2, leadMs: 10 * MIN, partitions: 4 },
    { name: 'day', widthMs: DAY, ring: 400, guard: 2, leadMs: 2 * HOUR, partitions: 4 },
  ],
  due: { partitions: 16 },
  replayWindowMs: DAY,
  dlq: { partitions: 1, retentionMs: 14 * DAY },
  events: [
    { type: 'COUPON_EXPIRED', topic: 'timebucket.events.coupon-expired', partitions: 8, retentionMs: 7 * DAY },
    { type: 'ORDER_CANCELLED', topic: 'timebucket.events.order-cancelled', partitions: 8, retentionMs: 7 * DAY },
  ],
};

type Json = typeof productionJson;
type TierJson = Json['tiers'][number];

/** The production document with some tiers' fields replaced. */
function withTiers(patches: Partial<TierJson>[], rest: Partial<Json> = {}): unknown {
  return { ...productionJson, ...rest, tiers: productionJson.tiers.map((t, i) => ({ ...t, ...patches[i] })) };
}

function problemsOf(json: unknown): string[] {
  try {
    parseTopology(json, 'topics/topology.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
  throw new Error('expected a ConfigError');
}

describe('parseTopology', () => {
  test('the production table parses, deeply frozen', () => {
    const t = parseTopology(productionJson, 'topology.json');
    expect(t.tiers.map((tier) => tier.name)).toEqual(['minute', 'hour', 'day']);
    expect(Object.isFrozen(t)).toBe(true);
    expect(Object.isFrozen(t.tiers)).toBe(true);
    expect(Object.isFrozen(t.tiers[1])).toBe(true);
    expect(Object.isFrozen(t.events[0])).toBe(true);
    expect(Object.isFrozen(t.dlq)).toBe(true);
  });

  test('accepts the JSON text, and names the source when it is not JSON', () => {
    expect(parseTopology(JSON.stringify(productionJson), 'x').prefix).toBe('tb');
    expect(() => parseTopology('{nope', 'topics/topology.json')).toThrow(/^invalid topology in topics\/topology\.json: not JSON/);
  });

  test.each<[string, unknown, RegExp]>([
    ['widths not increasing', withTiers([{}, { widthMs: MIN }]), /^tiers\.1\.widthMs: widths must increase strictly/],
    ['a width that is not a multiple of the finer width', withTiers([{}, { widthMs: 90_000 }]), /^tiers\.1\.widthMs: .*multiple/],
    ['ring not above guard', withTiers([{}, { ring: 2 }]), /^tiers\.1\.ring: ring \(2\) must be greater than guard \(2\)/],
    ['guard 0', withTiers([{ guard: 0 }]), /^tiers\.0\.guard: /],
    [
      'a finest-tier lead of a whole width',
      withTiers([{ leadMs: 60_000 }]),
      /^tiers\.0\.leadMs: the finest tier's leadMs \(60000\) must be less than its widthMs \(60000\)/,
    ],
    ['a negative lead', withTiers([{}, { leadMs: -1 }]), /^tiers\.1\.leadMs: /],
    [
      'width + lead beyond the finer horizon',
      withTiers([{}, { leadMs: 59 * MIN }]),
      /^tiers\.1\.leadMs: widthMs \+ leadMs \(7140000\) must be <= the horizon of tier 'minute' \(7080000\)/,
    ],
    ['a coarsest ring too short to progress', withTiers([{}, {}, { ring: 4, guard: 2 }]), /^tiers\.2\.ring: the coarsest tier needs ring − guard − 1/],
    ['0 partitions', withTiers([{}, { partitions: 0 }]), /^tiers\.1\.partitions: /],
    ['0 shards', { ...productionJson, shards: 0 }, /^shards: /],
    ['a bad prefix', { ...productionJson, prefix: 'tb/x' }, /^prefix: /],
    ['a duplicate tier name', withTiers([{}, { name: 'minute' }]), /^tiers\.1\.name: duplicate tier name 'minute'/],
    ['an upper-case tier name', withTiers([{ name: 'Minute' }]), /^tiers\.0\.name: /],
    ['an unknown key (a typo)', withTiers([{ leadMS: 0 } as Partial<TierJson>]), /^tiers\.0: Unrecognized key/],
    ['no tiers', { ...productionJson, tiers: [] }, /^tiers: /],
    // One far-future entry in the only tier would be held, pinning its partition's commit point.
    ['a single tier', { ...productionJson, tiers: productionJson.tiers.slice(0, 1) }, /^tiers: at least two tiers: the finest holds entries until they fire/],
    [
      'an event topic that is also a ring topic',
      { ...productionJson, events: [{ ...productionJson.events[0], topic: 'tb.minute.007' }] },
      /^events: topic 'tb.minute.007' is declared twice/,
    ],
  ])('reports %s', (_name, json, problem) => {
    expect(problemsOf(json)).toEqual(expect.arrayContaining([expect.stringMatching(problem)]));
  });

  test('lists every problem at once, in the message too', () => {
    const json = withTiers([{ leadMs: MIN }, { widthMs: 90_000, ring: 1 }, { leadMs: 200 * HOUR }], { prefix: '' });
    let error: unknown;
    try {
      parseTopology(json, 'topics/topology.json');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message, details } = error as ConfigError;
    const problems = details['problems'] as string[];
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^prefix: /),
        expect.stringMatching(/^tiers\.0\.leadMs: the finest tier/),
        expect.stringMatching(/^tiers\.1\.ring: ring \(1\) must be greater than guard/),
        expect.stringMatching(/^tiers\.1\.widthMs: .*multiple/),
        expect.stringMatching(/^tiers\.2\.leadMs: widthMs \+ leadMs/),
      ]),
    );
    expect(message).toMatch(/^invalid topology in topics\/topology\.json: /);
    for (const p of problems) expect(message).toContain(p);
  });

  test('a tier table with width + lead beyond the finer horizon is rejected', () => {
    // hour: 60 + 10 min fit in minute's 118-min horizon; with a 90-min lead they do not.
    const json = withTiers([{}, { leadMs: 90 * MIN }]);
    expect(() => parseTopology(json, 'x')).toThrow(ConfigError);
    expect(() => parseTopology(json, 'x')).toThrow(/must be <= the horizon of tier 'minute'/);
    expect(() => parseTopology(withTiers([{}, { leadMs: 58 * MIN }]), 'x')).not.toThrow();
  });
});

describe('bucket math and names', () => {
  const topology = parseTopology(productionJson, 'x');
  const [minute, hour, day] = topology.tiers as [Tier, Tier, Tier];

  test('horizon = (ring − guard) × width', () => {
    expect(horizonMs(minute)).toBe(118 * MIN);
    expect(horizonMs(hour)).toBe(46 * HOUR);
    expect(horizonMs(day)).toBe(398 * DAY);
  });

  test('ring index = floor(bucket / width) mod ring', () => {
    expect(ringIndex(minute, 0)).toBe(0);
    expect(ringIndex(minute, 7 * MIN)).toBe(7);
    expect(ringIndex(minute, 127 * MIN)).toBe(7);
    expect(ringIndex(hour, 49 * HOUR)).toBe(1);
    expect(ringIndex(minute, -MIN)).toBe(119);
  });

  test('ring topics are zero-padded to the digits of ring − 1, at least 2', () => {
    expect(ringTopic(topology, minute, 7)).toBe('tb.minute.007');
    expect(ringTopic(topology, hour, 3)).toBe('tb.hour.03');
    expect(ringTopic(topology, { ...minute, ring: 10 }, 9)).toBe('tb.minute.09');
    expect(ringTopic(topology, { ...minute, ring: 1000 }, 999)).toBe('tb.minute.999');
    expect(ringTopic(topology, { ...minute, ring: 1001 }, 7)).toBe('tb.minute.0007');
    expect(dueTopic(topology)).toBe('tb.due');
    expect(dlqTopic(topology)).toBe('tb.dlq');
  });

  test('partition = shard mod partitions', () => {
    expect(partitionOfShard(13, 4)).toBe(1);
    expect(partitionOfShard(13, 16)).toBe(13);
  });
});

describe('declaredTopics', () => {
  const topology = parseTopology(productionJson, 'x');
  const topics = declaredTopics(topology);
  const byName = new Map(topics.map((t) => [t.topic, t]));

  test("every ring topic, the due lane, the main database's waiting lane, the DLQ, the capture-probe topic and the event topics, once each", () => {
    expect(topics).toHaveLength(120 + 48 + 400 + 1 + 1 + 1 + 1 + 2);
    expect(byName.size).toBe(topics.length);
    const minuteNames = topics.filter((t) => t.topic.startsWith('tb.minute.')).map((t) => t.topic);
    expect(minuteNames).toEqual(Array.from({ length: 120 }, (_, i) => `tb.minute.${String(i).padStart(3, '0')}`));
    expect(minuteNames[0]).toBe('tb.minute.000');
    expect(minuteNames[119]).toBe('tb.minute.119');
    expect(
      topics
        .filter((t) => t.topic.startsWith('tb.hour.'))
        .map((t) => t.topic)
        .slice(-1),
    ).toEqual(['tb.hour.47']);
    expect(
      topics
        .filter((t) => t.topic.startsWith('tb.day.'))
        .map((t) => t.topic)
        .slice(-1),
    ).toEqual(['tb.day.399']);
  });

  test('partitions and retention', () => {
    expect(byName.get('tb.minute.000')).toEqual({
      topic: 'tb.minute.000',
      partitions: 16,
      config: { 'cleanup.policy': 'delete', 'retention.ms': String(120 * MIN + DAY) },
    });
    expect(byName.get('tb.hour.47')?.config['retention.ms']).toBe(String(48 * HOUR + DAY));
    expect(byName.get('tb.day.123')).toMatchObject({ partitions: 4, config: { 'retention.ms': String(400 * DAY + DAY) } });
    expect(byName.get('tb.due')).toMatchObject({ partitions: 16, config: { 'retention.ms': String(2 * DAY) } });
    expect(byName.get('tb.dlq')).toMatchObject({ partitions: 1, config: { 'retention.ms': String(14 * DAY) } });
    // A database's work while it is away: the due lane's partitions, kept as long as a dead letter.
    expect(byName.get('tb.waiting.main')).toMatchObject({ partitions: 16, config: { 'retention.ms': String(14 * DAY) } });
    // Probes are read as they arrive (publish/capture-probe.ts): one partition, an hour.
    expect(byName.get('tb.outbox-probe')).toEqual({
      topic: 'tb.outbox-probe',
      partitions: 1,
      config: { 'cleanup.policy': 'delete', 'retention.ms': String(HOUR) },
    });
    expect(byName.get('timebucket.events.order-cancelled')).toMatchObject({ partitions: 8, config: { 'retention.ms': String(7 * DAY) } });
    for (const t of topics) expect(t.config['cleanup.policy']).toBe('delete');
  });
});

test("declaredTopics: a waiting lane for each of the entities' databases", () => {
  const names = declaredTopics(parseTopology(productionJson, 'x'), ['main', 'shop_b']).map((t) => t.topic);
  expect(names.filter((n) => n.includes('.waiting.'))).toEqual(['tb.waiting.main', 'tb.waiting.shop_b']);
});

describe('parseTopic', () => {
  const topology = parseTopology({ ...productionJson, prefix: 'tb.prod' }, 'x');

  test('round-trips every ring topic and the due lane', () => {
    for (const [tierIndex, tier] of topology.tiers.entries()) {
      for (let index = 0; index < tier.ring; index += 1) {
        expect(parseTopic(topology, ringTopic(topology, tier, index))).toEqual({ lane: 'ring', tierIndex, ringIndex: index });
      }
    }
    expect(parseTopic(topology, 'tb.prod.due')).toEqual({ lane: 'due' });
  });

  test("a database's waiting lane is read as the due lane", () => {
    expect(parseTopic(topology, waitingTopic(topology, 'shop_b'))).toEqual({ lane: 'due' });
    expect(parseTopic(topology, 'tb.prod.waiting.main')).toEqual({ lane: 'due' });
  });

  test.each([
    'tb.prod.dlq',
    'timebucket.events.coupon-expired',
    'tb.minute.007',
    'tb.prod.minute.7',
    'tb.prod.minute.0007',
    'tb.prod.hour.48',
    'tb.prod.week.01',
    'tb.prod.minute.007.x',
    'other.due',
    'tb.prod.waiting.',
    'tb.prod.waiting.Shop',
    'tb.prod.waiting.a.b',
  ])('%s is not a ring or due topic', (topic) => {
    expect(parseTopic(topology, topic)).toBeUndefined();
  });
});

describe('ringTopics', () => {
  const t = parseTopology(testTopologyJson, 'topics/test.json');

  test('finest tier → every minute topic', () => {
    expect(ringTopics(t, [0])).toEqual(Array.from({ length: 12 }, (_, i) => `tbtest.minute.${String(i).padStart(2, '0')}`));
  });

  test('coarser tiers → every hour then every day topic', () => {
    expect(ringTopics(t, [1, 2])).toEqual([
      ...['00', '01', '02', '03', '04', '05', '06', '07'].map((i) => `tbtest.hour.${i}`),
      ...['00', '01', '02', '03', '04', '05'].map((i) => `tbtest.day.${i}`),
    ]);
  });

  test('no tiers → no topics', () => {
    expect(ringTopics(t, [])).toEqual([]);
  });
});
