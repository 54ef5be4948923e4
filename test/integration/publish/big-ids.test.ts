/**
 * Ids beyond 2^53 end to end from the database to the event topics: rows written by raw SQL
 * with snowflake-style ids, transitioned by the expiry transaction (coupon.expired,
 * order.cancelled), their events encoded into event_outbox and published by an outbox
 * connector, read back by a fresh subscriber client: every id decodes to exactly the long that
 * was written (compared as bigints), and the message key is the exact decimal id. An id no Avro
 * long holds is rejected by the encoder and dead-lettered in its transaction, exact, and its
 * transition commits.
 *
 * In a database of this file's own (an explicit id moves the table's AUTO_INCREMENT past it),
 * with an outbox connector of its own: only these rows reach its topics.
 *
 * @mysql
 * @lane isolated
 */
import { transitionOf } from '../../../src/core/entity-catalogue';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { createDlqWriter } from '../../../src/kafka/dlq-writer';
import { createSchemaRegistry } from '../../../src/publish/schema-registry';
import { config, logger, uniqueName } from '../../support/stack';
import { registerOutboxConnector, type TestOutboxConnector } from '../../support/test-connector';
import { waitFor } from '../../support/wait-for';
import { usePublishEnvironment } from './publish-environment';
import { catalogue, prefixedWriter } from './outbox-fixtures';
import { createTestTopics } from '../../support/topics';

type Received = { topic: string; key: string; headers: Record<string, string>; value: Buffer };

const ABOVE_2_53 = '9007199254740993'; // 2^53 + 1
const MAX_SIGNED = '9223372036854775807'; // 2^63 - 1, the largest Avro long
const MAX_UNSIGNED = '18446744073709551615'; // BIGINT UNSIGNED's largest: no Avro long holds it

const env = usePublishEnvironment('publish_big_ids');
let connector: TestOutboxConnector;

beforeAll(async () => {
  connector = await registerOutboxConnector(env.testDb.name);
});
afterAll(async () => {
  await connector?.remove();
});

async function expireAt(table: 'coupons' | 'orders', id: string): Promise<{ id: string; expireAtMs: number }> {
  const [rows] = (await env.db.raw(`SELECT expire_time FROM ${table} WHERE id = ?`, [id])) as [Array<{ expire_time: Date }>];
  return { id, expireAtMs: rows[0]!.expire_time.getTime() };
}

/** Every record of `topics` from the beginning, raw, as a subscriber receives it. */
async function readAll(topics: readonly string[]): Promise<{ received: Received[]; stop: () => Promise<void> }> {
  const received: Received[] = [];
  const consumer = env.kafka.consumer({ groupId: uniqueName('tb-big-ids'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topics: [...topics], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, message }) => {
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString() ?? '']));
      received.push({ topic, key: message.key?.toString() ?? '', headers, value: message.value ?? Buffer.alloc(0) });
    },
  });
  return { received, stop: () => consumer.disconnect() };
}

test('coupon and order events carry ids 2^53 + 1 and 2^63 - 1 exactly; an id above 2^63 - 1 is dead-lettered, exact', async () => {
  const heldCoupon = '9007199254740994';
  await env.db.raw(
    `INSERT INTO coupons (id, user_id, status, locked_order_id, expire_time) VALUES
       (${ABOVE_2_53}, ${MAX_SIGNED}, 'ACTIVE', NULL, NOW(3) - INTERVAL 1 SECOND),
       (${MAX_SIGNED}, ${ABOVE_2_53}, 'ACTIVE', NULL, NOW(3) - INTERVAL 1 SECOND),
       (${MAX_UNSIGNED}, 1, 'ACTIVE', NULL, NOW(3) - INTERVAL 1 SECOND),
       (${heldCoupon}, ${ABOVE_2_53}, 'LOCKED', ${MAX_SIGNED}, NOW(3) + INTERVAL 1 HOUR)`,
  );
  await env.db.raw(
    `INSERT INTO orders (id, user_id, status, coupon_id, expire_time) VALUES
       (${MAX_SIGNED}, ${MAX_SIGNED}, 'UNPAID', ${heldCoupon}, NOW(3) - INTERVAL 1 SECOND),
       (${ABOVE_2_53}, ${ABOVE_2_53}, 'UNPAID', NULL, NOW(3) - INTERVAL 1 SECOND)`,
  );
  const coupons = await Promise.all([ABOVE_2_53, MAX_SIGNED, MAX_UNSIGNED].map((id) => expireAt('coupons', id)));
  const orders = await Promise.all([MAX_SIGNED, ABOVE_2_53].map((id) => expireAt('orders', id)));

  // The expirer's writer: an event the encoder rejects goes to the dead-letter topic, in its transaction.
  const dlqTopic = uniqueName('tb-big-ids-dlq');
  const dlq = createDlqWriter({ producer: env.producer, topic: dlqTopic, logger, otherCode: 'EVENT_REJECTED' });
  const { write, topics } = await prefixedWriter(env.db, 'big-ids', { deadLetters: dlq });
  await createTestTopics(
    env.admin,
    [...Object.values(topics), dlqTopic].map((topic) => ({ topic, numPartitions: 1 })),
  );
  const read = await readAll([...Object.values(topics), dlqTopic]);
  const onEvents = () => read.received.filter((m) => m.topic !== dlqTopic);
  const deadLetters = () => read.received.filter((m) => m.topic === dlqTopic);
  try {
    const batches = createTransitionBatches(env.db, catalogue, { outbox: write });
    expect((await batches.run(transitionOf(catalogue, 'coupon', 'expired'), coupons, 'stream')).transitioned).toHaveLength(3);
    expect((await batches.run(transitionOf(catalogue, 'order', 'cancelled'), orders, 'stream')).transitioned).toHaveLength(2);
    await waitFor('4 events and the dead letter read back', () => (onEvents().length >= 4 && deadLetters().length >= 1 ? true : undefined), {
      timeoutMs: 60_000,
    });
  } finally {
    await read.stop();
  }

  // Message keys are the exact decimal ids: one coupon and one order event for each.
  expect(
    onEvents()
      .map((m) => m.key)
      .sort(),
  ).toEqual([ABOVE_2_53, ABOVE_2_53, MAX_SIGNED, MAX_SIGNED]);
  // A fresh client, as a subscriber has: the writer schema is fetched from the registry by id.
  const subscriber = createSchemaRegistry(config.registry);
  const decoded = await Promise.all(onEvents().map(async (m) => ({ key: m.key, value: (await subscriber.decode(m.value)) as Record<string, unknown> })));
  const coupon = (id: string) => decoded.find((m) => m.value['event_type'] === 'COUPON_EXPIRED' && m.key === id)?.value;
  const order = (id: string) => decoded.find((m) => m.value['event_type'] === 'ORDER_CANCELLED' && m.key === id)?.value;
  // A transition's key ends with its database time, the event's occurred_at.
  expect(coupon(ABOVE_2_53)).toMatchObject({
    coupon_id: BigInt(ABOVE_2_53),
    user_id: BigInt(MAX_SIGNED),
    event_key: `coupon-expired-${ABOVE_2_53}-${coupons[0]!.expireAtMs}-${coupon(ABOVE_2_53)?.['occurred_at']}`,
  });
  expect(coupon(MAX_SIGNED)).toMatchObject({
    coupon_id: BigInt(MAX_SIGNED),
    user_id: BigInt(ABOVE_2_53),
    event_key: `coupon-expired-${MAX_SIGNED}-${coupons[1]!.expireAtMs}-${coupon(MAX_SIGNED)?.['occurred_at']}`,
  });
  expect(order(MAX_SIGNED)).toMatchObject({ order_id: BigInt(MAX_SIGNED), user_id: BigInt(MAX_SIGNED), coupon_id: BigInt(heldCoupon), coupon_released: true });
  expect(order(ABOVE_2_53)).toMatchObject({ order_id: BigInt(ABOVE_2_53), user_id: BigInt(ABOVE_2_53), coupon_id: null, coupon_released: false });

  // The coupon above 2^63 - 1 is rejected by the encoder, never written with a wrapped or
  // rounded id: dead-lettered with the reason, its id exact in the event's JSON; it still expired.
  expect(deadLetters()).toHaveLength(1);
  const [letter] = deadLetters();
  expect(letter!.key).toBe(MAX_UNSIGNED);
  expect(letter!.headers).toMatchObject({
    dlq_error_code: 'EVENT_REJECTED',
    dlq_reason: expect.stringMatching(/coupon_id/),
    dlq_source_topic: topics['COUPON_EXPIRED'],
    event_type: 'COUPON_EXPIRED',
  });
  expect(JSON.parse(letter!.value.toString())).toMatchObject({ coupon_id: MAX_UNSIGNED, event_type: 'COUPON_EXPIRED' });
  await expect(env.db('event_outbox').where({ entity_id: MAX_UNSIGNED }).count({ n: '*' })).resolves.toEqual([{ n: 0 }]);
  const [[{ status }]] = (await env.db.raw(`SELECT status FROM coupons WHERE id = ${MAX_UNSIGNED}`)) as [[{ status: string }]];
  expect(status).toBe('EXPIRED');
});
