/** `topics apply` against the real broker: creates what is missing, idempotent, reports drift. */
import { Admin, ConfigResourceTypes } from 'kafkajs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { declaredTopics, parseTopology } from '../../../src/core/topology';
import { createKafka } from '../../../src/kafka/client';
import { applyTopics } from '../../../src/kafka/topics-apply';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

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
  await admin.createTopics({ topics: [{ topic: wrong.topic, numPartitions: 1 }], waitForLeaders: true });

  const first = await applyTopics(admin, declared);
  expect(first.created).toHaveLength(declared.length - 1);
  expect(first.existing).toEqual([wrong.topic]);
  expect(first.drift).toEqual(
    expect.arrayContaining([{ topic: wrong.topic, what: 'partitions', declared: String(wrong.partitions), actual: '1' }]),
  );
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
  expect(second.drift).toEqual(
    expect.arrayContaining([{ topic: ring.topic, what: 'retention.ms', declared: ring.config['retention.ms'], actual: '1234' }]),
  );
  expect(second.drift.filter((d) => d.topic !== ring.topic && d.topic !== wrong.topic)).toEqual([]);

  await admin.deleteTopics({ topics: declared.map((d) => d.topic) });
});
