/**
 * `replay` and `offsets reset` read a bucket through a throwaway consumer group. Ctrl-C during
 * the read must not leave that group behind (an operator's listing would fill with dead
 * `<prefix>.replay.*` groups): the scan stops on the abort, deletes its group, and says it was
 * interrupted. On the real broker, with ring records written as the repartitioner writes them.
 *
 * @lane isolated
 */
import type { Admin, Kafka, Producer } from 'kafkajs';
import { bucketRecord, byTopic } from '../../../src/core/bucket-record';
import { systemClock } from '../../../src/core/clock';
import { declaredTopics, parseTopology } from '../../../src/core/topology';
import { createKafka } from '../../../src/kafka/client';
import { applyTopics } from '../../../src/kafka/topics-apply';
import { replayGroupId, scanBucket } from '../../../src/replay/bucket-scan';
import { bucketWindow } from '../../../src/replay/bucket-window';
import testTopologyJson from '../../../topics/test.json';
import { defaultCatalogue } from '../../support/catalogue';
import { config, logger, uniqueName } from '../../support/stack';

let kafka: Kafka;
let admin: Admin;
let producer: Producer;

beforeAll(async () => {
  kafka = createKafka(config.kafka, logger, '-test-scan-interrupt');
  admin = kafka.admin();
  // Idempotent, as the stages' producers are: the first append to topics created a moment ago may
  // be retried past a leader election, and a plain producer would then write some records twice.
  producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await Promise.all([admin.connect(), producer.connect()]);
});

afterAll(async () => {
  await Promise.all([admin.disconnect(), producer.disconnect()]);
});

test('an abort while the bucket is read stops the scan, which deletes its group and rejects as INTERRUPTED', async () => {
  const prefix = uniqueName('tbtscan').replace(/-/g, '');
  const topology = parseTopology({ ...testTopologyJson, prefix }, 'test topology');
  await applyTopics(admin, declaredTopics(topology));
  // 40 coupons due in one finest bucket a few seconds ahead, routed into its ring topic.
  const now = Date.now();
  const finest = topology.tiers[0]!;
  const bucketStart = Math.floor((now + 4_000) / finest.widthMs) * finest.widthMs;
  const entries = Array.from({ length: 40 }, (_, i) => ({ entity: 'coupon', transition: 'expired', id: String(1_000 + i), expireAtMs: bucketStart + 10 + i }));
  const records = entries.map((e) => bucketRecord(topology, defaultCatalogue, e, now));
  const window = bucketWindow(topology, 0, bucketStart);
  expect(records.every((r) => r.topic === window.topic)).toBe(true);
  await producer.sendBatch({ acks: -1, topicMessages: byTopic(records) });

  const controller = new AbortController();
  const groupId = replayGroupId(prefix);
  let seen = 0;
  const scan = scanBucket({
    kafka,
    topology,
    catalogue: defaultCatalogue,
    window,
    groupId,
    clock: systemClock,
    logger,
    signal: controller.signal,
    // The operator's Ctrl-C, as soon as the first entries are in hand.
    onEntries: async (_partition, held) => {
      seen += held.length;
      controller.abort();
    },
  });
  await expect(scan).rejects.toMatchObject({ code: 'INTERRUPTED' });
  expect(seen).toBeGreaterThan(0);
  const { groups } = await admin.listGroups();
  expect(groups.map((g) => g.groupId)).not.toContain(groupId);

  // Not aborted, the same scan reads every entry (and deletes its group as well).
  let all = 0;
  const again = replayGroupId(prefix);
  await scanBucket({
    kafka,
    topology,
    catalogue: defaultCatalogue,
    window,
    groupId: again,
    clock: systemClock,
    logger,
    onEntries: async (_p, held) => void (all += held.length),
  });
  expect(all).toBe(entries.length);
  expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain(again);
}, 120_000);
