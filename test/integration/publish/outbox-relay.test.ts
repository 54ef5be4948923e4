/**
 * The relay against the real stack: outbox rows reach their event topics, Avro through the
 * registry, exactly once per row even with two relays, and poison is set aside.
 *
 * The outbox table is shared with other test files (and other runs), so a relay here may also
 * publish foreign unpublished rows; they go to this test's topics by their type. Assertions
 * therefore look only at this test's rows, found by their (random) event keys.
 *
 * The reverse also happens: a relay in another process (someone's pipeline test against the same
 * stack) claims any unleased row, this test's included, and publishes it to its own topics.
 * Tests that are not about claiming therefore insert their rows already leased to their relay,
 * in the inserting transaction, so no other relay ever sees them unleased; the concurrency test
 * accounts for every row whichever relay took it.
 */
import { randomInt } from 'node:crypto';
import { Admin, IHeaders, Kafka, Producer } from 'kafkajs';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { createDb, Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { couponExpiredKey, CouponExpired, EventType, OrderCancelled, orderCancelledKey } from '../../../src/core/events';
import { insertOutbox, OutboxInsert } from '../../../src/expire/sql/insert-outbox';
import { OutboxRelay, OutboxRelayOptions } from '../../../src/publish/outbox-relay';
import { loadEventSchema, registerEventSchemas, SchemaIds, subjectFor } from '../../../src/publish/schemas';
import { createSchemaRegistry } from '../../../src/publish/schema-registry';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

type Topics = Record<EventType, string>;
type Received = { topic: string; partition: number; key: string; headers: Record<string, string>; value: Record<string, unknown> };

let db: Db;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;
let registry: SchemaRegistry;
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  db = createDb(config.db);
  kafka = createKafka(config.kafka, logger, '-test');
  admin = kafka.admin();
  producer = kafka.producer({ idempotent: true });
  registry = createSchemaRegistry(config.registry.url);
  await Promise.all([admin.connect(), producer.connect()]);
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await Promise.all([admin.disconnect(), producer.disconnect()]);
  await db.destroy();
});

async function setup(partitions = 1): Promise<{ topics: Topics; schemaIds: SchemaIds }> {
  const topics: Topics = { COUPON_EXPIRED: uniqueName('tb-coupon-expired'), ORDER_CANCELLED: uniqueName('tb-order-cancelled') };
  await admin.createTopics({ topics: Object.values(topics).map((topic) => ({ topic, numPartitions: partitions })), waitForLeaders: true });
  const schemaIds = await registerEventSchemas(registry, topics, { registryUrl: config.registry.url });
  return { topics, schemaIds };
}

function newRelay(topics: Topics, schemaIds: SchemaIds, over: Partial<OutboxRelayOptions> = {}): OutboxRelay {
  const relay = new OutboxRelay({
    db,
    producer,
    registry,
    schemaIds,
    topicsByEventType: topics,
    relayId: uniqueName('relay'),
    batchSize: 500,
    leaseMs: 30_000,
    idleDelayMs: 50,
    logger,
    ...over,
  });
  relays.push(relay);
  return relay;
}

// Random ids far above anything the other tests insert: event keys are unique per test.
const randomId = (): number => randomInt(1e12, 2 ** 47);
const dueAt = Date.UTC(2031, 0, 1, 0, 0, 0, 123);

function couponExpired(): OutboxInsert & { event: CouponExpired } {
  const id = String(randomId());
  const event: CouponExpired = {
    event_key: couponExpiredKey(id, dueAt),
    event_type: 'COUPON_EXPIRED',
    coupon_id: id,
    user_id: '9',
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    due_at: dueAt,
    occurred_at: dueAt + 250,
    path: 'stream',
    version: 1,
  };
  return { event, entityType: 'coupon', entityId: id };
}

function orderCancelled(couponId: string | null): OutboxInsert & { event: OrderCancelled } {
  const id = String(randomId());
  const event: OrderCancelled = {
    event_key: orderCancelledKey(id, dueAt),
    event_type: 'ORDER_CANCELLED',
    order_id: id,
    user_id: '9',
    from_status: 'UNPAID',
    to_status: 'CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: couponId,
    coupon_released: couponId !== null,
    due_at: dueAt,
    occurred_at: dueAt + 7,
    path: 'scanner',
    version: 2,
  };
  return { event, entityType: 'order', entityId: id };
}

type Lease = Readonly<{ owner: string; ms: number }>;

/**
 * Inserts rows as the expirer does; with `lease`, leases them in the same transaction (the
 * rows are never visible unleased). `raw` rows are written as no code path writes them.
 */
async function insert(rows: readonly OutboxInsert[], opts: { lease?: Lease; raw?: Array<Record<string, unknown>> } = {}): Promise<string[]> {
  const keys = [...rows.map((r) => r.event.event_key), ...(opts.raw ?? []).map((r) => String(r['event_key']))];
  await db.transaction(async (trx) => {
    await insertOutbox(trx, rows);
    if (opts.raw) await trx('outbox').insert(opts.raw);
    if (opts.lease) {
      await trx.raw('UPDATE outbox SET claimed_by = ?, claim_until = NOW(3) + INTERVAL ? MICROSECOND WHERE event_key IN (?)', [
        opts.lease.owner,
        opts.lease.ms * 1000,
        keys,
      ]);
    }
  });
  return keys;
}

async function outboxRows(keys: readonly string[]): Promise<Array<{ event_key: string; claimed_by: string | null; claim_until: Date | null; published_at: Date | null }>> {
  return db('outbox').whereIn('event_key', [...keys]).select('event_key', 'claimed_by', 'claim_until', 'published_at');
}

async function publishedCount(keys: readonly string[]): Promise<number> {
  return (await outboxRows(keys)).filter((r) => r.published_at !== null).length;
}

/** Runs publishOnce until all of `keys` are published (foreign backlog may take several cycles). */
async function publishAll(relay: OutboxRelay, keys: readonly string[]): Promise<void> {
  await waitFor(`${keys.length} rows published`, async () => {
    await relay.publishOnce();
    return (await publishedCount(keys)) === keys.length ? true : undefined;
  });
}

const text = (headers: IHeaders | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k, String(v)]));

/** Everything on `topics` up to their current end, decoded through the registry. */
async function readAll(topics: Topics): Promise<Received[]> {
  const ends = new Map<string, number>();
  for (const topic of Object.values(topics)) {
    for (const p of await admin.fetchTopicOffsets(topic)) ends.set(`${topic}/${p.partition}`, Number(p.high));
  }
  const seen = new Map<string, number>();
  const received: Received[] = [];
  // A fresh client, as a subscriber has: the writer schema is fetched from the registry by id.
  const subscriberRegistry = createSchemaRegistry(config.registry.url);
  const consumer = kafka.consumer({ groupId: uniqueName('tb-relay-read'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: Object.values(topics), fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const value = (await subscriberRegistry.decode(message.value!)) as Record<string, unknown>;
        received.push({ topic, partition, key: message.key?.toString() ?? '', headers: text(message.headers), value });
        seen.set(`${topic}/${partition}`, Number(message.offset) + 1);
      },
    });
    await waitFor('every partition read to its end', () => ([...ends].every(([tp, end]) => (seen.get(tp) ?? 0) >= end) ? true : undefined));
  } finally {
    await consumer.disconnect();
  }
  return received;
}

/** An event as a subscriber decodes it: Avro longs other than timestamps (ids, version) as bigints. */
function decoded(event: CouponExpired | OrderCancelled): Record<string, unknown> {
  const longs = new Set(['coupon_id', 'order_id', 'user_id', 'version']);
  return Object.fromEntries(Object.entries(event).map(([k, v]) => [k, longs.has(k) && v !== null ? BigInt(v as string | number) : v]));
}

function mine(received: readonly Received[], keys: readonly string[]): Received[] {
  const wanted = new Set(keys);
  return received.filter((m) => wanted.has(m.headers['event_key'] ?? ''));
}

test('publishes each row to its type topic: Avro value, entity-id key, headers; then marks it published', async () => {
  const { topics, schemaIds } = await setup();
  const coupon = couponExpired();
  const orders = [orderCancelled(coupon.event.coupon_id), orderCancelled(null)];
  const relayId = uniqueName('relay');
  const keys = await insert([coupon, ...orders], { lease: { owner: relayId, ms: 60_000 } });
  const relay = newRelay(topics, schemaIds, { relayId });

  await publishAll(relay, keys);
  const rows = await outboxRows(keys);
  expect(rows.map((r) => r.claimed_by)).toEqual(keys.map(() => relayId));
  expect(relay.published).toBeGreaterThanOrEqual(3);

  const received = mine(await readAll(topics), keys);
  expect(received).toHaveLength(3);
  for (const { event, entityId } of [coupon, ...orders]) {
    const msg = received.find((m) => m.headers['event_key'] === event.event_key)!;
    expect(msg.topic).toBe(topics[event.event_type]);
    expect(msg.key).toBe(entityId);
    expect(msg.value).toEqual(decoded(event));
    expect(msg.headers).toEqual({
      event_key: event.event_key,
      event_type: event.event_type,
      ce_id: event.event_key,
      ce_type: event.event_type === 'COUPON_EXPIRED' ? 'timebucket.coupon.expired' : 'timebucket.order.cancelled',
      ce_source: '/timebucket/expirer',
      ce_time: new Date(event.occurred_at).toISOString(),
      ce_specversion: '1.0',
      'content-type': 'application/avro',
    });
  }

  // A second cycle sends none of these rows again and leaves their published_at alone.
  const before = (await outboxRows(keys)).map((r) => r.published_at?.getTime());
  await relay.publishOnce();
  expect((await outboxRows(keys)).map((r) => r.published_at?.getTime())).toEqual(before);
  expect(mine(await readAll(topics), keys)).toHaveLength(3);
});

test('registers the schemas under <topic>-value, BACKWARD, idempotently', async () => {
  const { topics, schemaIds } = await setup();
  await expect(registerEventSchemas(registry, topics, { registryUrl: config.registry.url })).resolves.toEqual(schemaIds);

  for (const type of ['COUPON_EXPIRED', 'ORDER_CANCELLED'] as const) {
    const subject = subjectFor(topics[type]);
    const cfg = await fetch(`${config.registry.url}/config/${subject}`);
    expect(cfg.status).toBe(200);
    await expect(cfg.json()).resolves.toEqual({ compatibilityLevel: 'BACKWARD' });
    await expect(registry.getLatestSchemaId(subject)).resolves.toBe(schemaIds[type]);
  }

  // BACKWARD is enforced: a new field without a default cannot read older events.
  const schema = JSON.parse(loadEventSchema('COUPON_EXPIRED')) as { fields: unknown[] };
  schema.fields.push({ name: 'brand_new', type: 'long', doc: 'no default' });
  await expect(
    registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: subjectFor(topics.COUPON_EXPIRED) }),
  ).rejects.toThrow(/ncompatib/);
});

test('two relays running concurrently over 300 rows publish each row exactly once', async () => {
  const { topics, schemaIds } = await setup(3);
  const rows = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? orderCancelled(i % 2 ? null : String(randomId())) : couponExpired()));
  const keys = rows.map((r) => r.event.event_key);
  const [idA, idB] = [uniqueName('relay-a'), uniqueName('relay-b')];
  const secondProducer = kafka.producer({ idempotent: true });
  await secondProducer.connect();
  try {
    // Both already polling when the rows commit, so they race each other for them.
    const a = newRelay(topics, schemaIds, { relayId: idA, batchSize: 10, idleDelayMs: 10 });
    const b = newRelay(topics, schemaIds, { relayId: idB, batchSize: 10, idleDelayMs: 10, producer: secondProducer });
    a.start();
    b.start();
    await insert(rows);
    // Long deadline: a relay of another run that dies holding some of these rows keeps them for its lease.
    await waitFor('all 300 rows published', async () => ((await publishedCount(keys)) === 300 ? true : undefined), { timeoutMs: 90_000 });
    await Promise.all([a.stop(), b.stop()]);
  } finally {
    await secondProducer.disconnect();
  }

  // Who published each row (claimed_by stays set after publishing).
  const owner = new Map((await outboxRows(keys)).map((r) => [r.event_key, r.claimed_by]));
  const foreign = [...owner.values()].filter((o) => o !== idA && o !== idB);
  const taken = { a: keys.filter((k) => owner.get(k) === idA).length, b: keys.filter((k) => owner.get(k) === idB).length };
  if (foreign.length === 0) {
    // Both relays took part: the test exercised the lease, not one relay doing all the work.
    expect(taken.a).toBeGreaterThan(0);
    expect(taken.b).toBeGreaterThan(0);
  } else {
    // A relay of a concurrent run (same database) raced ours for these rows. The exactly-once
    // checks below still cover every row, but only if ours published some of them.
    console.warn(`${foreign.length} of 300 rows were taken by relays of another run (${[...new Set(foreign)].join(', ')}); ours took ${taken.a} + ${taken.b}`);
    expect(taken.a + taken.b).toBeGreaterThan(0);
  }

  // Every row this run's relays published is on the topics exactly once; no other row is.
  const counts = new Map<string, number>();
  for (const m of mine(await readAll(topics), keys)) counts.set(m.headers['event_key']!, (counts.get(m.headers['event_key']!) ?? 0) + 1);
  const expected = keys.filter((k) => owner.get(k) === idA || owner.get(k) === idB);
  expect([...counts.keys()].sort()).toEqual(expected.sort());
  expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
});

test('a poison row is set aside, not published, and the rows after it still flow', async () => {
  const { topics, schemaIds } = await setup();
  const before = couponExpired();
  const mismatch = couponExpired();
  const after = orderCancelled(null);
  // Schema mismatch: passes the row checks, but Avro rejects a string where a long belongs.
  const badEvent = { ...mismatch.event, user_id: 'nine' } as unknown as CouponExpired;
  // Not JSON at all.
  const notJson = { event_key: `coupon-expired-${randomId()}-${dueAt}`, event_type: 'COUPON_EXPIRED', entity_type: 'coupon', entity_id: randomId(), payload: '{"event_key":' };
  const relayId = uniqueName('relay');
  await insert([before, { ...mismatch, event: badEvent }, after], { raw: [notJson], lease: { owner: relayId, ms: 60_000 } });
  const good = [before.event.event_key, after.event.event_key];
  const poison = [mismatch.event.event_key, notJson.event_key];
  const relay = newRelay(topics, schemaIds, { relayId });

  await publishAll(relay, good);
  const rows = new Map((await outboxRows([...good, ...poison])).map((r) => [r.event_key, r]));
  for (const key of poison) {
    expect(rows.get(key)).toMatchObject({ claimed_by: 'poison', published_at: null });
    expect(rows.get(key)!.claim_until!.getUTCFullYear()).toBe(9999);
  }
  expect(relay.poison).toBeGreaterThanOrEqual(2);
  expect(mine(await readAll(topics), [...good, ...poison]).map((m) => m.headers['event_key']).sort()).toEqual([...good].sort());

  // Set aside for good: another relay does not claim them.
  await newRelay(topics, schemaIds).publishOnce();
  expect((await outboxRows(poison)).map((r) => r.claimed_by)).toEqual(['poison', 'poison']);
});

test('a failed send leaves the rows unpublished; the running loop backs off and retries them', async () => {
  const { topics, schemaIds } = await setup();
  const relayId = uniqueName('relay');
  const keys = await insert([couponExpired(), couponExpired()], { lease: { owner: relayId, ms: 60_000 } });
  let failures = 2;
  const flaky: Pick<Producer, 'send'> = {
    send: async (record) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('injected: broker unavailable');
      }
      return producer.send(record);
    },
  };
  const relay = newRelay(topics, schemaIds, { relayId, producer: flaky, maxBackoffMs: 200 });

  await expect(relay.publishOnce()).rejects.toThrow(/injected/);
  expect(relay.errors).toBe(1);
  expect((await outboxRows(keys)).map((r) => r.published_at)).toEqual([null, null]);

  relay.start();
  await waitFor('the rows published after the failures', async () => ((await publishedCount(keys)) === 2 ? true : undefined));
  expect(relay.errors).toBe(2);
  expect(relay.lifecycle).toBe('RUNNING');
  expect(mine(await readAll(topics), keys)).toHaveLength(2);
});

test('a live lease is respected; once it expires the rows are taken over', async () => {
  const { topics, schemaIds } = await setup();
  const dead = uniqueName('dead-relay');
  const keys = await insert([couponExpired(), orderCancelled(null)], { lease: { owner: dead, ms: 1_500 } });
  const relayId = uniqueName('relay');
  const relay = newRelay(topics, schemaIds, { relayId });

  await relay.publishOnce();
  expect((await outboxRows(keys)).map((r) => [r.claimed_by, r.published_at])).toEqual([
    [dead, null],
    [dead, null],
  ]);

  await publishAll(relay, keys);
  const rows = await outboxRows(keys);
  // Taken over by this relay, or by a relay of a concurrent run: never published by the dead one.
  expect(rows.filter((r) => r.claimed_by === dead)).toEqual([]);
  const byMe = rows.filter((r) => r.claimed_by === relayId).map((r) => r.event_key);
  expect(mine(await readAll(topics), keys).map((m) => m.headers['event_key']).sort()).toEqual(byMe.sort());
});

test('stop() cancels the idle wait at once, is idempotent, and a relay starts only once', async () => {
  const { topics, schemaIds } = await setup();
  // Without the cancellable timer, stop() would wait out the cap (stopTimeoutMs) below.
  const relay = newRelay(topics, schemaIds, { idleDelayMs: 60_000, maxBackoffMs: 60_000, stopTimeoutMs: 30_000 });
  relay.start();
  expect(() => relay.start()).toThrow(/starts once/);
  await waitFor('a first cycle (then the relay waits idleDelayMs)', () => (relay.cycles >= 1 ? true : undefined));
  const t0 = Date.now();
  await Promise.all([relay.stop(), relay.stop()]);
  await relay.stop();
  expect(Date.now() - t0).toBeLessThan(5_000);
  expect(relay.lifecycle).toBe('STOPPED');
});
