/**
 * A repartitioner whose append fails with an error kafkajs calls non-retriable must not die of
 * it. After a broker is killed, kafkajs's idempotent producer can be refused with
 * OUT_OF_ORDER_SEQUENCE_NUMBER (found by the three-node broker-kill test): the guarded producer
 * replaces the producer, so the next attempt succeeds, but a batch handler that lets the error
 * reach kafkajs crashes the consumer for good (kafkajs restarts only on retriable errors), and
 * the stage is FAILED with its CDC partitions unread. Here the broker is real and one append is
 * refused with the broker's own error; the stage must retry it and route the change.
 *
 * @lane isolated
 */
import type { Admin, Kafka, Producer, ProducerBatch } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { systemClock } from '../../../src/core/clock';
import { declaredTopics, dlqTopic, parseTopology, type Topology } from '../../../src/core/topology';
import { Repartitioner } from '../../../src/ingest/repartitioner';
import { createKafka } from '../../../src/kafka/client';
import { createDlqWriter } from '../../../src/kafka/dlq-writer';
import { createGuardedProducer } from '../../../src/kafka/guarded-producer';
import { applyTopics } from '../../../src/kafka/topics-apply';
import { loadEntities } from '../../../src/ops/load-entities';
import testTopologyJson from '../../../topics/test.json';
import { defaultEntitiesPath } from '../../support/catalogue';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

// The broker's error table (kafkajs's own), to refuse an append exactly as the broker did.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode: (code: number) => Error };
const OUT_OF_ORDER_SEQUENCE_NUMBER = 45;

let kafka: Kafka;
let admin: Admin;
let writer: Producer;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  kafka = createKafka(config.kafka, logger, '-test-send-failure');
  admin = kafka.admin();
  writer = kafka.producer();
  await Promise.all([admin.connect(), writer.connect()]);
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  await Promise.all([admin.disconnect(), writer.disconnect()]);
});

test('an append refused with OUT_OF_ORDER_SEQUENCE_NUMBER is retried on a new producer; the stage stays RUNNING and the change is routed', async () => {
  const prefix = uniqueName('tbtsend').replace(/-/g, '');
  const topology: Topology = parseTopology({ ...testTopologyJson, prefix }, 'test topology');
  const cdc = `${prefix}.cdc.coupons`;
  await applyTopics(admin, [...declaredTopics(topology), { topic: cdc, partitions: 1, config: {} }]);
  const catalogue = loadEntities(defaultEntitiesPath);
  const entity = catalogue.entities.find((e) => e.name === 'coupon')!;

  // Every producer the guarded one makes is real; the first append of the first is refused.
  const appended: ProducerBatch[] = [];
  let refused = 0;
  const producer = createGuardedProducer(
    () => {
      const real = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
      return Object.assign(Object.create(real) as Producer, {
        sendBatch: async (batch: ProducerBatch) => {
          if (refused === 0) {
            refused += 1;
            throw createErrorFromCode(OUT_OF_ORDER_SEQUENCE_NUMBER);
          }
          const sent = await real.sendBatch(batch);
          appended.push(batch);
          return sent;
        },
      });
    },
    { logger },
  );
  await producer.connect();
  cleanups.push(() => producer.disconnect());

  const group = `${prefix}.repartitioner`;
  const stage = new Repartitioner({
    consumer: kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 1_000 }),
    group,
    producer,
    cdcTopics: { [cdc]: { topic: cdc, entity, database: 'main', tables: new Map(entity.locations.map((l) => [l.table, l])), routed: false } },
    catalogue,
    topology,
    dlq: createDlqWriter({ producer, topic: dlqTopic(topology), logger, otherCode: 'CDC_UNDECODABLE' }),
    clock: systemClock,
    logger,
    listTopics: () => admin.listTopics(),
    stallMs: 60_000,
    startFrom: 'earliest',
    sendRetry: { backoff: { baseMs: 50, maxMs: 200 }, deterministicAttempts: 3 },
  });
  await stage.start();
  cleanups.push(() => stage.stop());

  const after = { id: 4242, user_id: 1, status: 'ACTIVE', expire_time: Date.now() + 60_000 };
  // Committed now, due in a minute: the shipped file's fire points (3d, 1d, 30m before) are past, so one entry.
  await writer.send({ topic: cdc, messages: [{ key: '4242', value: JSON.stringify({ op: 'c', before: null, after, source: { ts_ms: Date.now() } }) }] });

  await waitFor('the change to be appended to a bucket topic', () => (appended.length > 0 || stage.lifecycle === 'FAILED' ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  expect(stage.lifecycle).toBe('RUNNING');
  expect(refused).toBe(1);
  expect(producer.generations()).toBe(2);
  const entries = appended.flatMap((b) => b.topicMessages!.flatMap((t) => t.messages));
  expect(entries.map((m) => JSON.parse(m.value!.toString()) as { id: string })).toEqual([expect.objectContaining({ id: '4242' })]);
  expect(stage.health()).toEqual({ ok: true });
}, 120_000);
