/**
 * The relay against the real stack: outbox rows reach their event topics, Avro through the
 * registry, exactly once per row even with several relays or loops, in outbox order per entity;
 * a failed cycle gives its rows back; poison is moved to outbox_poison and can be redriven.
 *
 * In a database of this file's own, emptied before each test: no relay of another file or run
 * sees these rows, and these relays see no others. So ownership is exact: every row is published
 * by the relay the test expects, once, and the relays' counters equal the rows they published.
 *
 * @lane isolated
 */
import { randomInt } from 'node:crypto';
import { Admin, IHeaders, Kafka, Producer } from 'kafkajs';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { Db } from '../../../src/db/knex';
import type { EventPayload } from '../../../src/core/events';
import { insertOutbox, OutboxInsert } from '../../../src/expire/sql/insert-outbox';
import { OutboxRelay, OutboxRelayOptions } from '../../../src/publish/outbox-relay';
import { loadEventSchema, registerEventSchemas, SchemaIds, subjectFor } from '../../../src/publish/schemas';
import { createSchemaRegistry } from '../../../src/publish/schema-registry';
import { catalogue, couponExpiredInsert, EventInsert, eventSpec, orderCancelledInsert, uniqueEventTopics } from './outbox-fixtures';
import { lockOutboxBatch } from '../../../src/publish/sql/lock-outbox-batch';
import { redrivePoison } from '../../../src/publish/sql/redrive-poison';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor, withTimeout } from '../../support/wait-for';
import { createTestDatabase } from '../../support/test-database';
import { usePublishEnvironment } from './publish-environment';
import { entityIds, insertCouponEvents } from './outbox-fixtures';
import { createTestTopics } from '../../support/topics';

type Topics = Record<string, string>;
type Received = { topic: string; partition: number; key: string; headers: Record<string, string>; value: Record<string, unknown> };
type PoisonRecord = { id: number; event_key: string; reason: string; set_aside_by: string; payload: string };

const env = usePublishEnvironment('outbox_relay');
let db: Db;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;
let registry: SchemaRegistry;
const relays: OutboxRelay[] = [];

// After the environment's own beforeAll (hooks run in the order registered).
beforeAll(() => {
  ({ db, kafka, admin, producer } = env);
  registry = createSchemaRegistry(config.registry);
});

beforeEach(async () => {
  await db.raw('DELETE FROM outbox');
  await db.raw('DELETE FROM outbox_poison');
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

async function setup(partitions = 1): Promise<{ topics: Topics; schemaIds: SchemaIds }> {
  const topics: Topics = uniqueEventTopics('relay');
  await createTestTopics(admin, Object.values(topics).map((topic) => ({ topic, numPartitions: partitions })));
  const schemaIds = await registerEventSchemas(registry, catalogue, topics, { registry: config.registry });
  return { topics, schemaIds };
}

function newRelay(topics: Topics, schemaIds: SchemaIds, over: Partial<OutboxRelayOptions> = {}): OutboxRelay {
  const relay = new OutboxRelay({
    db,
    catalogue,
    producer,
    registry,
    schemaIds,
    registryUrl: config.registry.url,
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

// Random ids: event keys unique per test, and messages on a topic traceable to their row.
const randomId = (): number => randomInt(1e12, 2 ** 47);
const dueAt = Date.UTC(2031, 0, 1, 0, 0, 0, 123);

const couponExpired = (): EventInsert => couponExpiredInsert(String(randomId()), dueAt, 250);

const orderCancelled = (couponId: string | null): EventInsert =>
  orderCancelledInsert(String(randomId()), couponId, { dueAtMs: dueAt, occurredAtMs: dueAt + 7, path: 'scanner', version: 2 });

/** Inserts rows as the expirer does. `raw` rows are written as no code path writes them. */
async function insert(rows: readonly OutboxInsert[], opts: { raw?: Array<Record<string, unknown>> } = {}): Promise<string[]> {
  const keys = [...rows.map((r) => r.event.event_key), ...(opts.raw ?? []).map((r) => String(r['event_key']))];
  await db.transaction(async (trx) => {
    await insertOutbox(trx, rows);
    if (opts.raw) await trx('outbox').insert(opts.raw);
  });
  return keys;
}

/** The outbox rows of `keys`, in the order of `keys`. */
async function outboxRows(keys: readonly string[]): Promise<Array<{ event_key: string; claimed_by: string | null; published_at: Date | null }>> {
  const rows = (await db('outbox').whereIn('event_key', [...keys]).select('event_key', 'claimed_by', 'published_at')) as Array<{
    event_key: string;
    claimed_by: string | null;
    published_at: Date | null;
  }>;
  const byKey = new Map(rows.map((r) => [r.event_key, r]));
  return keys.map((k) => byKey.get(k)!);
}

async function publishedCount(keys: readonly string[]): Promise<number> {
  return (await outboxRows(keys)).filter((r) => r.published_at !== null).length;
}

/** Every row of this database's outbox (nothing else writes to it). */
async function outboxSize(): Promise<number> {
  const [{ n }] = (await db('outbox').count({ n: '*' })) as [{ n: number }];
  return Number(n);
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
  const subscriberRegistry = createSchemaRegistry(config.registry);
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
function decoded(event: EventPayload): Record<string, unknown> {
  const longs = new Set(['coupon_id', 'order_id', 'user_id', 'version']);
  return Object.fromEntries(Object.entries(event).map(([k, v]) => [k, longs.has(k) && v !== null ? BigInt(v as string | number) : v]));
}

test('publishes each row to its type topic: Avro value, entity-id key, headers; then marks it published', async () => {
  const { topics, schemaIds } = await setup();
  const coupon = couponExpired();
  const orders = [orderCancelled(coupon.entityId), orderCancelled(null)];
  const keys = await insert([coupon, ...orders]);
  const relayId = uniqueName('relay');
  const relay = newRelay(topics, schemaIds, { relayId });

  // One cycle claims, sends and marks all three: the only rows there are.
  await expect(relay.publishOnce()).resolves.toBe(3);
  const rows = await outboxRows(keys);
  expect(rows.map((r) => r.claimed_by)).toEqual(keys.map(() => relayId));
  expect(rows.every((r) => r.published_at !== null)).toBe(true);
  expect(relay.published).toBe(3);

  const received = await readAll(topics);
  expect(received.map((m) => m.headers['event_key']).sort()).toEqual([...keys].sort());
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
      ce_subject: entityId,
      ce_dataschema: `${config.registry.url}/schemas/ids/${schemaIds[event.event_type]}`,
      ce_time: new Date(event['occurred_at'] as number).toISOString(),
      ce_specversion: '1.0',
      'content-type': 'application/avro',
    });
    // ce_dataschema resolves, at the registry, to the schema the value was written with.
    const res = await fetch(msg.headers['ce_dataschema']!);
    const { schema } = (await res.json()) as { schema: string };
    expect(JSON.parse(schema)).toEqual(JSON.parse(loadEventSchema(eventSpec(event.event_type))));
  }

  // A second cycle sends none of these rows again and leaves their published_at alone.
  const before = (await outboxRows(keys)).map((r) => r.published_at?.getTime());
  await expect(relay.publishOnce()).resolves.toBe(0);
  expect((await outboxRows(keys)).map((r) => r.published_at?.getTime())).toEqual(before);
  expect(relay.published).toBe(3);
  await expect(readAll(topics)).resolves.toHaveLength(3);
});

test('registers the schemas under <topic>-value, BACKWARD, idempotently', async () => {
  const { topics, schemaIds } = await setup();
  await expect(registerEventSchemas(registry, catalogue, topics, { registry: config.registry })).resolves.toEqual(schemaIds);

  for (const { type } of catalogue.events) {
    const subject = subjectFor(topics[type]!);
    const cfg = await fetch(`${config.registry.url}/config/${subject}`);
    expect(cfg.status).toBe(200);
    await expect(cfg.json()).resolves.toEqual({ compatibilityLevel: 'BACKWARD' });
    await expect(registry.getLatestSchemaId(subject)).resolves.toBe(schemaIds[type]);
  }

  // BACKWARD is enforced: a new field without a default cannot read older events.
  const schema = JSON.parse(loadEventSchema(eventSpec('COUPON_EXPIRED'))) as { fields: unknown[] };
  schema.fields.push({ name: 'brand_new', type: 'long', doc: 'no default' });
  await expect(
    registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: subjectFor(topics['COUPON_EXPIRED']!) }),
  ).rejects.toThrow(/ncompatib/);
});

test('two relays running concurrently over 300 rows publish each row exactly once', async () => {
  const { topics, schemaIds } = await setup(3);
  const rows = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? orderCancelled(i % 2 ? null : String(randomId())) : couponExpired()));
  const keys = rows.map((r) => r.event.event_key);
  const [idA, idB] = [uniqueName('relay-a'), uniqueName('relay-b')];
  const secondProducer = kafka.producer({ idempotent: true });
  await secondProducer.connect();
  // Both already polling when the rows commit, so they race each other for them.
  const a = newRelay(topics, schemaIds, { relayId: idA, batchSize: 10, idleDelayMs: 10 });
  const b = newRelay(topics, schemaIds, { relayId: idB, batchSize: 10, idleDelayMs: 10, producer: secondProducer });
  try {
    a.start();
    b.start();
    await insert(rows);
    await waitFor('all 300 rows published', async () => ((await publishedCount(keys)) === 300 ? true : undefined));
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await secondProducer.disconnect();
  }

  // Who published each row (claimed_by stays set after publishing): A or B, never anyone else.
  const owner = new Map((await outboxRows(keys)).map((r) => [r.event_key, r.claimed_by]));
  const byA = keys.filter((k) => owner.get(k) === idA);
  const byB = keys.filter((k) => owner.get(k) === idB);
  expect(byA.length + byB.length).toBe(300);
  // Both took part: the test exercised the lease, not one relay doing all the work.
  expect(byA.length).toBeGreaterThan(0);
  expect(byB.length).toBeGreaterThan(0);
  // Each relay counts exactly the rows it owns: none marked twice, none sent by the other as well.
  expect([a.published, b.published]).toEqual([byA.length, byB.length]);
  expect([a.poison, b.poison]).toEqual([0, 0]);

  // On the wire: every row exactly once, and nothing else.
  const counts = new Map<string, number>();
  for (const m of await readAll(topics)) counts.set(m.headers['event_key']!, (counts.get(m.headers['event_key']!) ?? 0) + 1);
  expect([...counts.keys()].sort()).toEqual([...keys].sort());
  expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
  await expect(outboxSize()).resolves.toBe(300);
});

test('a poison row is moved to outbox_poison with its reason, the rows after it still flow, and a fixed one is redriven', async () => {
  const { topics, schemaIds } = await setup();
  const before = couponExpired();
  const mismatch = couponExpired();
  const after = orderCancelled(null);
  // Schema mismatch: passes the row checks, but Avro rejects a string where a long belongs.
  const badEvent: EventPayload = { ...mismatch.event, user_id: 'nine' };
  // Not JSON at all.
  const notJson = { event_key: `coupon-expired-${randomId()}-${dueAt}`, event_type: 'COUPON_EXPIRED', entity_type: 'coupon', entity_id: randomId(), payload: '{"event_key":' };
  await insert([before, { ...mismatch, event: badEvent }, after], { raw: [notJson] });
  const good = [before.event.event_key, after.event.event_key];
  const poison = [mismatch.event.event_key, notJson.event_key];
  const relayId = uniqueName('relay');
  const relay = newRelay(topics, schemaIds, { relayId });

  // One cycle: the good rows published by this relay, the poison set aside by it.
  await expect(relay.publishOnce()).resolves.toBe(2);
  expect([relay.published, relay.poison]).toEqual([2, 2]);
  for (const row of await outboxRows(good)) expect(row).toMatchObject({ claimed_by: relayId, published_at: expect.any(Date) });
  // Out of the outbox (so no claim or backlog count reads past them), into outbox_poison with why.
  await expect(db('outbox').whereIn('event_key', poison).count({ n: '*' })).resolves.toEqual([{ n: 0 }]);
  const aside = new Map(((await db('outbox_poison').select('id', 'event_key', 'reason', 'set_aside_by', 'payload')) as PoisonRecord[]).map((r) => [r.event_key, r]));
  expect([...aside.keys()].sort()).toEqual([...poison].sort());
  expect(aside.get(mismatch.event.event_key)).toMatchObject({ set_aside_by: relayId, reason: expect.stringMatching(/Avro schema at user_id/) });
  expect(aside.get(notJson.event_key)).toMatchObject({ set_aside_by: relayId, reason: 'payload is not JSON' });
  expect((await readAll(topics)).map((m) => m.headers['event_key']).sort()).toEqual([...good].sort());

  // Another relay has nothing to do.
  const otherId = uniqueName('relay');
  const other = newRelay(topics, schemaIds, { relayId: otherId });
  await expect(other.publishOnce()).resolves.toBe(0);
  expect([other.published, other.poison]).toEqual([0, 0]);

  // Redrive: the mismatched row fixed in outbox_poison and moved back under its id is published;
  // the unfixed one is set aside again by the relay that finds it.
  const fixedId = aside.get(mismatch.event.event_key)!.id;
  await db('outbox_poison').where({ id: fixedId }).update({ payload: JSON.stringify(mismatch.event) });
  await expect(redrivePoison(db, [String(fixedId), String(aside.get(notJson.event_key)!.id)])).resolves.toBe(2);
  await expect(db('outbox_poison').count({ n: '*' })).resolves.toEqual([{ n: 0 }]);
  await expect(other.publishOnce()).resolves.toBe(1);
  expect([other.published, other.poison]).toEqual([1, 1]);
  expect((await outboxRows([mismatch.event.event_key]))[0]).toMatchObject({ claimed_by: otherId, published_at: expect.any(Date) });
  expect(((await db('outbox_poison').select('event_key')) as Array<{ event_key: string }>).map((r) => r.event_key)).toEqual([notJson.event_key]);
  const received = await readAll(topics);
  expect(received.map((m) => m.headers['event_key']).sort()).toEqual([...good, mismatch.event.event_key].sort());
  expect(received.find((m) => m.headers['event_key'] === mismatch.event.event_key)!.value).toEqual(decoded(mismatch.event));
});

test('a failed send frees its rows at once, and the next cycle sends the same oldest rows first', async () => {
  const { topics, schemaIds } = await setup();
  const relayId = uniqueName('relay');
  const keys = await insert([couponExpired(), couponExpired(), couponExpired(), couponExpired()]);
  let failures = 2;
  const attempts: string[][] = [];
  const flaky: Pick<Producer, 'send'> = {
    send: async (record) => {
      attempts.push(record.messages.map((m) => String((m.headers as IHeaders)['event_key'])));
      if (failures > 0) {
        failures -= 1;
        throw new Error('injected: broker unavailable');
      }
      return producer.send(record);
    },
  };
  let failedCycles = 0;
  const relay = newRelay(topics, schemaIds, { relayId, producer: flaky, batchSize: 2, maxBackoffMs: 200, observer: { failed: () => (failedCycles += 1) } });
  // Free: another loop could lock them right now (the failed cycle's transaction has ended).
  const free = async (): Promise<string[]> => {
    const { rows } = await db.transaction((trx) => lockOutboxBatch(trx, 10));
    return rows.map((r) => r.eventKey);
  };

  await expect(relay.publishOnce()).rejects.toThrow(/injected/);
  expect([relay.errors, relay.published, await publishedCount(keys)]).toEqual([1, 0, 0]);
  expect(await free()).toEqual(keys);
  // The next cycle takes the same two, the oldest, not two more.
  await expect(relay.publishOnce()).rejects.toThrow(/injected/);
  expect(attempts).toEqual([keys.slice(0, 2), keys.slice(0, 2)]);
  expect(await free()).toEqual(keys);

  relay.start();
  await waitFor('the rows published after the failures', async () => ((await publishedCount(keys)) === 4 ? true : undefined));
  expect(relay.errors).toBe(2);
  // What timebucket_outbox_relay_failures_total counts.
  expect(failedCycles).toBe(2);
  expect(relay.published).toBe(4);
  expect(relay.lifecycle).toBe('RUNNING');
  expect((await outboxRows(keys)).map((r) => r.claimed_by)).toEqual(keys.map(() => relayId));
  expect((await readAll(topics)).map((m) => m.headers['event_key']).sort()).toEqual([...keys].sort());
});

test('four loops over 600 rows of 100 entities publish every row once, each entity in outbox order', async () => {
  const { topics, schemaIds } = await setup(3);
  // Six events per entity, interleaved: every batch holds rows of entities with rows in flight elsewhere.
  const entities = entityIds(100);
  const ids = await insertCouponEvents(db, Array.from({ length: 6 }, () => entities).flat());
  const rows = (await db('outbox').orderBy('id').select('id', 'event_key', 'entity_id')) as Array<{ id: number; event_key: string; entity_id: number }>;
  expect(rows.map((r) => String(r.id))).toEqual(ids);
  const loops = Array.from({ length: 4 }, () => newRelay(topics, schemaIds, { batchSize: 25, idleDelayMs: 10 }));
  for (const loop of loops) loop.start();
  await waitFor('all 600 rows published', async () => ((await publishedCount(rows.map((r) => r.event_key))) === 600 ? true : undefined));
  await Promise.all(loops.map((loop) => loop.stop()));

  expect(loops.reduce((sum, loop) => sum + loop.published, 0)).toBe(600);
  // The loops shared the work: each of them published something.
  expect(loops.every((loop) => loop.published > 0)).toBe(true);
  const received = await readAll(topics);
  expect(received.map((m) => m.headers['event_key']).sort()).toEqual(rows.map((r) => r.event_key).sort());
  // Per entity (one key, one partition): the events in the order of their outbox rows.
  for (const entity of entities) {
    const expected = rows.filter((r) => String(r.entity_id) === entity).map((r) => r.event_key);
    expect(received.filter((m) => m.key === entity).map((m) => m.headers['event_key'])).toEqual(expected);
  }
});

test('a loop leaves an entity\'s later events alone while another loop is sending its earlier ones', async () => {
  const { topics, schemaIds } = await setup(2);
  // Three rounds of events for 20 entities: A takes round one, then B looks at rounds two and three.
  const entities = entityIds(20);
  await insertCouponEvents(db, [...entities, ...entities, ...entities]);
  const rows = (await db('outbox').orderBy('id').select('event_key', 'entity_id')) as Array<{ event_key: string; entity_id: number }>;
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  // A's sends wait at the gate: its batch is in flight, locked and unpublished, until the test opens it.
  let sending!: () => void;
  const aSending = new Promise<void>((resolve) => (sending = resolve));
  const held: Pick<Producer, 'send'> = {
    send: async (record) => {
      sending();
      return gate.then(() => producer.send(record));
    },
  };
  const a = newRelay(topics, schemaIds, { producer: held, batchSize: 20 });
  const b = newRelay(topics, schemaIds, { batchSize: 40 });

  const aCycle = a.publishOnce();
  await aSending;
  // Every row B could take belongs to an entity whose earlier event is in flight: it takes none.
  await expect(b.publishOnce()).resolves.toBe(0);
  openGate();
  await expect(aCycle).resolves.toBe(20);
  // Now rounds two and three go, in order within B's batch.
  await expect(b.publishOnce()).resolves.toBe(40);

  const received = await readAll(topics);
  for (const entity of entities) {
    const expected = rows.filter((r) => String(r.entity_id) === entity).map((r) => r.event_key);
    expect(received.filter((m) => m.key === entity).map((m) => m.headers['event_key'])).toEqual(expected);
  }
});

test('a loop stalled on a send loses its batch after the lease, and another loop publishes it', async () => {
  const { topics, schemaIds } = await setup();
  const keys = await insert([couponExpired(), orderCancelled(null)]);
  let sendCalled!: () => void;
  const stalledSend = new Promise<void>((resolve) => (sendCalled = resolve));
  // A send that never returns, on a connection that stays alive: only the lease can end it.
  const stuck: Pick<Producer, 'send'> = {
    send: () => {
      sendCalled();
      return new Promise(() => undefined);
    },
  };
  const stalled = newRelay(topics, schemaIds, { producer: stuck, leaseMs: 1_000, stopTimeoutMs: 100 });
  const stalledCycle = stalled.publishOnce().then(
    () => 'published',
    (err: unknown) => String(err),
  );
  await stalledSend;
  const relayId = uniqueName('relay');
  const relay = newRelay(topics, schemaIds, { relayId });
  // While the stalled loop holds them, they are skipped, not waited for.
  await expect(relay.publishOnce()).resolves.toBe(0);

  // After the lease (1 s) the database ends the stalled transaction and the rows are taken over.
  await waitFor('the stalled batch to be published by another loop', async () => ((await relay.publishOnce()) > 0 ? true : undefined), { timeoutMs: 10_000 });
  expect(relay.published).toBe(2);
  expect((await outboxRows(keys)).map((r) => [r.claimed_by, r.published_at !== null])).toEqual([
    [relayId, true],
    [relayId, true],
  ]);
  expect((await readAll(topics)).map((m) => m.headers['event_key']).sort()).toEqual([...keys].sort());
  // And the stalled loop gave up on its send at the lease rather than hanging on to its connection.
  await expect(stalledCycle).resolves.toMatch(/outlived the relay lease/);
  expect(stalled.errors).toBe(1);
});

test('stop() cancels the idle wait at once, is idempotent, and a second start does nothing', async () => {
  const { topics, schemaIds } = await setup();
  // Without the cancellable timer, stop() would wait out the cap (stopTimeoutMs) below.
  const relay = newRelay(topics, schemaIds, { idleDelayMs: 60_000, maxBackoffMs: 60_000, stopTimeoutMs: 30_000 });
  await relay.start();
  await relay.start();
  expect(relay.lifecycle).toBe('RUNNING');
  await waitFor('a first cycle (then the relay waits idleDelayMs)', () => (relay.cycles >= 1 ? true : undefined));
  const t0 = Date.now();
  await Promise.all([relay.stop(), relay.stop()]);
  await relay.stop();
  // The behaviour is a bound: without the cancellable timer, stop() waits out the 30 s cap. Half
  // the cap, from the call, tells the two apart with room for a loaded machine.
  expect(Date.now() - t0).toBeLessThan(15_000);
  expect(relay.lifecycle).toBe('STOPPED');
});

test('a deterministic failure (no outbox table) turns the loop FAILED, which its health names; a retriable one does not', async () => {
  const { topics, schemaIds } = await setup();
  const bare = await createTestDatabase('relay_bare', { migrate: false });
  try {
    const relay = newRelay(topics, schemaIds, { db: bare.db, idleDelayMs: 10, maxBackoffMs: 20 });
    await relay.start();
    const failure = await withTimeout('the relay FAILED', relay.failed(), 10_000);
    expect(failure.message).toMatch(/outbox.*doesn't exist/i);
    expect(relay.lifecycle).toBe('FAILED');
    expect(relay.health()).toEqual({ ok: false, reason: expect.stringMatching(/^outbox relay FAILED/) });
    // Three cycles in a row, then no more.
    expect(relay.errors).toBe(3);
    await relay.stop();
  } finally {
    await bare.drop();
  }
  // A broker that fails every send with a retriable error: retried for as long as it lasts, healthy.
  const keys = await insert([couponExpired()]);
  const down: Pick<Producer, 'send'> = {
    send: async () => {
      throw Object.assign(new Error('injected: broker away'), { retriable: true });
    },
  };
  const retrying = newRelay(topics, schemaIds, { producer: down, idleDelayMs: 10, maxBackoffMs: 20 });
  await retrying.start();
  await waitFor('five failed cycles', () => (retrying.errors >= 5 ? true : undefined), { timeoutMs: 10_000, intervalMs: 10 });
  expect(retrying.lifecycle).toBe('RUNNING');
  expect(retrying.health()).toEqual({ ok: true });
  expect(await outboxRows(keys)).toEqual([expect.objectContaining({ published_at: null })]);
});
