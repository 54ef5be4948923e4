/**
 * `topics apply` against the real broker: creates what is missing, idempotent, reports drift.
 *
 * @lane isolated
 */
import { Admin, ConfigResourceTypes } from 'kafkajs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { declaredTopics, isBucketLane, parseTopology } from '../../../src/core/topology';
import { createKafka } from '../../../src/kafka/client';
import { applyTopics } from '../../../src/kafka/topics-apply';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';
import { createTestTopics } from '../../support/topics';

let admin: Admin;

beforeAll(async () => {
  admin = createKafka(config.kafka, logger, '-test-topics').admin();
  await admin.connect();
});

afterAll(async () => {
  await admin.disconnect();
});

test('creates every declared topic once, then reports partition and config drift without touching it', async () => {
  const raw = JSON.parse(readFileSync(join(__dirname, '../../../topics/test.json'), 'utf8')) as { prefix: string; events: Array<{ topic: string }> };
  raw.prefix = uniqueName('tba').replace(/-/g, '');
  raw.events.forEach((e, i) => (e.topic = `${raw.prefix}.events.${i}`));
  const declared = declaredTopics(parseTopology(raw, 'test'));
  // One declared topic already exists with the wrong partition count.
  const wrong = declared.find((d) => d.topic === `${raw.prefix}.due`)!;
  await createTestTopics(admin, [{ topic: wrong.topic, numPartitions: 1 }]);

  const first = await applyTopics(admin, declared);
  expect(first.created).toHaveLength(declared.length - 1);
  expect(first.existing).toEqual([wrong.topic]);
  expect(first.drift).toEqual(expect.arrayContaining([{ topic: wrong.topic, what: 'partitions', declared: String(wrong.partitions), actual: '1' }]));
  const meta = await admin.fetchTopicMetadata({ topics: [declared[0]!.topic] });
  expect(meta.topics[0]!.partitions).toHaveLength(declared[0]!.partitions);

  const ring = declared[0]!;
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: ring.topic, configEntries: [{ name: 'retention.ms', value: '1234' }] }],
  });
  // The broker applies a config change through its metadata log: ask until it is visible.
  const second = await waitFor('the altered retention to show as drift', async () => {
    const report = await applyTopics(admin, declared);
    return report.drift.some((d) => d.topic === ring.topic) ? report : undefined;
  });
  expect(second.created).toEqual([]);
  expect(second.drift).toEqual(expect.arrayContaining([{ topic: ring.topic, what: 'retention.ms', declared: ring.config['retention.ms'], actual: '1234' }]));
  expect(second.drift.filter((d) => d.topic !== ring.topic && d.topic !== wrong.topic)).toEqual([]);

  await admin.deleteTopics({ topics: declared.map((d) => d.topic) });
});

test('grows partitions only when asked, and names the ring topics a shrunk ring leaves behind', async () => {
  type Raw = { prefix: string; tiers: Array<{ ring: number; partitions: number }>; events: Array<{ topic: string; partitions: number }> };
  const raw = JSON.parse(readFileSync(join(__dirname, '../../../topics/test.json'), 'utf8')) as Raw;
  raw.prefix = uniqueName('tbg').replace(/-/g, '');
  raw.events.forEach((e, i) => (e.topic = `${raw.prefix}.events.${i}`));
  const before = declaredTopics(parseTopology(raw, 'test'));
  await applyTopics(admin, before);
  // The minute ring: 12 → 10 topics, 4 → 6 partitions each.
  raw.tiers[0]!.ring = 10;
  raw.tiers[0]!.partitions = 6;
  // An event topic too: never grown (an entity's events would change partition under subscribers).
  raw.events[0]!.partitions += 1;
  const eventTopic = raw.events[0]!.topic;
  const after = declaredTopics(parseTopology(raw, 'test'));
  const minutes = after.filter((d) => d.topic.startsWith(`${raw.prefix}.minute.`)).map((d) => d.topic);
  expect(minutes).toHaveLength(10);

  const asked = await applyTopics(admin, after, { prefix: raw.prefix });
  expect(asked.grown).toEqual([]);
  expect(asked.drift.filter((d) => d.what === 'partitions').map((d) => [d.topic, d.declared, d.actual])).toEqual([
    ...minutes.map((t) => [t, '6', '4']),
    [eventTopic, String(raw.events[0]!.partitions), String(raw.events[0]!.partitions - 1)],
  ]);
  expect(asked.orphans).toEqual([`${raw.prefix}.minute.10`, `${raw.prefix}.minute.11`]);

  const topology = parseTopology(raw, 'test');
  const grown = await applyTopics(admin, after, { prefix: raw.prefix, growPartitions: (topic) => isBucketLane(topology, topic) });
  expect(grown.grown.map((d) => [d.topic, d.declared, d.actual])).toEqual(minutes.map((t) => [t, '6', '4']));
  // A ring's retention is a lap plus the replay window: the resized ring's is drift, left to the operator.
  expect(grown.drift.map((d) => [d.topic, d.what])).toEqual([...minutes.map((t) => [t, 'retention.ms']), [eventTopic, 'partitions']]);
  expect((await admin.fetchTopicMetadata({ topics: [eventTopic] })).topics[0]!.partitions).toHaveLength(raw.events[0]!.partitions - 1);
  const meta = await admin.fetchTopicMetadata({ topics: minutes });
  expect(meta.topics.map((t) => t.partitions.length)).toEqual(minutes.map(() => 6));
  const again = await applyTopics(admin, after, { prefix: raw.prefix, growPartitions: (topic) => isBucketLane(topology, topic) });
  expect(again).toMatchObject({ created: [], grown: [], drift: grown.drift, orphans: [`${raw.prefix}.minute.10`, `${raw.prefix}.minute.11`] });

  await admin.deleteTopics({ topics: before.map((d) => d.topic) });
});
