/**
 * Ids beyond 2^53 end to end from the database to the event topics: rows written by raw SQL
 * with snowflake-style ids, transitioned by the expiry transaction (coupon.expired, order.cancelled), published by
 * the relay, read back by a fresh subscriber client: every id decodes to exactly the long that
 * was written (compared as bigints), and the message key is the exact decimal id.
 *
 * In a database of this file's own (an explicit id moves the table's AUTO_INCREMENT past it),
 * which also keeps relays of other test files and runs away from these outbox rows.
 *
 * @lane isolated
 */
import { transitionOf } from '../../../src/core/entity-catalogue';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { OutboxRelay } from '../../../src/publish/outbox-relay';
import { createSchemaRegistry } from '../../../src/publish/schema-registry';
import { registerEventSchemas } from '../../../src/publish/schemas';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';
import { usePublishEnvironment } from './publish-environment';
import { catalogue, uniqueEventTopics } from './outbox-fixtures';
import { createTestTopics } from '../../support/topics';

type Topics = Record<string, string>;
type Received = { topic: string; key: string; value: Record<string, unknown> };

const ABOVE_2_53 = '9007199254740993'; // 2^53 + 1
const MAX_SIGNED = '9223372036854775807'; // 2^63 - 1, the largest Avro long
const MAX_UNSIGNED = '18446744073709551615'; // BIGINT UNSIGNED's largest: no Avro long holds it

const env = usePublishEnvironment('publish_big_ids');

async function expireAt(table: 'coupons' | 'orders', id: string): Promise<{ id: string; expireAtMs: number }> {
  const [rows] = (await env.db.raw(`SELECT expire_time FROM ${table} WHERE id = ?`, [id])) as [Array<{ expire_time: Date }>];
  return { id, expireAtMs: rows[0]!.expire_time.getTime() };
}

/** Publishes every outbox row of this database to fresh topics; returns what a subscriber reads back. */
async function publishAndRead(): Promise<{ received: Received[]; relay: OutboxRelay }> {
  const topics: Topics = uniqueEventTopics('big-ids');
  await createTestTopics(env.admin, Object.values(topics).map((topic) => ({ topic, numPartitions: 1 })));
  const registry = createSchemaRegistry(config.registry);
  const schemaIds = await registerEventSchemas(registry, catalogue, topics, { registry: config.registry });
  const relay = new OutboxRelay({
    ...{ db: env.db, catalogue, producer: env.producer, registry, schemaIds, registryUrl: config.registry.url, topicsByEventType: topics, relayId: uniqueName('relay') },
    ...{ batchSize: 500, leaseMs: 30_000, idleDelayMs: 50, logger },
  });
  const [[{ n }]] = (await env.db.raw('SELECT COUNT(*) AS n FROM outbox')) as [[{ n: number }]];
  await waitFor('every outbox row published or set aside', async () => {
    await relay.publishOnce();
    return relay.published + relay.poison === Number(n) ? true : undefined;
  });

  // A fresh client, as a subscriber has: the writer schema is fetched from the registry by id.
  const subscriber = createSchemaRegistry(config.registry);
  const received: Received[] = [];
  const consumer = env.kafka.consumer({ groupId: uniqueName('tb-big-ids'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: Object.values(topics), fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, message }) => {
        const value = (await subscriber.decode(message.value!)) as Record<string, unknown>;
        received.push({ topic, key: message.key?.toString() ?? '', value });
      },
    });
    await waitFor(`${relay.published} events read back`, () => (received.length >= relay.published ? true : undefined));
  } finally {
    await consumer.disconnect();
  }
  return { received, relay };
}

test('coupon and order events carry ids 2^53 + 1 and 2^63 - 1 exactly; an id above 2^63 - 1 is set aside', async () => {
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
  const batches = createTransitionBatches(env.db, catalogue);
  expect((await batches.run(transitionOf(catalogue, 'coupon', 'expired'), coupons, 'stream')).transitioned).toHaveLength(3);
  expect((await batches.run(transitionOf(catalogue, 'order', 'cancelled'), orders, 'stream')).transitioned).toHaveLength(2);

  const { received, relay } = await publishAndRead();
  expect([relay.published, relay.poison]).toEqual([4, 1]);
  // Message keys are the exact decimal ids: one coupon and one order event for each.
  expect(received.map((m) => m.key).sort()).toEqual([ABOVE_2_53, ABOVE_2_53, MAX_SIGNED, MAX_SIGNED]);

  const coupon = (id: string) => received.find((m) => m.value['event_type'] === 'COUPON_EXPIRED' && m.key === id)?.value;
  const order = (id: string) => received.find((m) => m.value['event_type'] === 'ORDER_CANCELLED' && m.key === id)?.value;
  // A transition's key ends with its database time, the event's occurred_at.
  expect(coupon(ABOVE_2_53)).toMatchObject({ coupon_id: BigInt(ABOVE_2_53), user_id: BigInt(MAX_SIGNED), event_key: `coupon-expired-${ABOVE_2_53}-${coupons[0]!.expireAtMs}-${coupon(ABOVE_2_53)?.['occurred_at']}` });
  expect(coupon(MAX_SIGNED)).toMatchObject({ coupon_id: BigInt(MAX_SIGNED), user_id: BigInt(ABOVE_2_53), event_key: `coupon-expired-${MAX_SIGNED}-${coupons[1]!.expireAtMs}-${coupon(MAX_SIGNED)?.['occurred_at']}` });
  expect(order(MAX_SIGNED)).toMatchObject({ order_id: BigInt(MAX_SIGNED), user_id: BigInt(MAX_SIGNED), coupon_id: BigInt(heldCoupon), coupon_released: true });
  expect(order(ABOVE_2_53)).toMatchObject({ order_id: BigInt(ABOVE_2_53), user_id: BigInt(ABOVE_2_53), coupon_id: null, coupon_released: false });

  // The coupon above 2^63 - 1 is set aside, never published with a wrapped or rounded id.
  const [aside] = (await env.db.raw('SELECT CAST(entity_id AS CHAR) AS id, reason FROM outbox_poison')) as [Array<{ id: string; reason: string }>];
  expect(aside).toEqual([{ id: MAX_UNSIGNED, reason: expect.stringMatching(/coupon_id/) }]);
});
