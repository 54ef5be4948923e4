/**
 * Debezium's Outbox Event Router publishes event_outbox, and subscribers see each event as the
 * expiry transaction wrote it: on its event type's topic, keyed by the exact decimal entity id,
 * on the partition Kafka's default partitioner (and kafkajs's) picks for that key, with exactly
 * the event headers (publish/event-headers.ts) and no other, and a value that is the row's
 * payload byte for byte: Confluent-framed Avro with the subject's registered schema id. An
 * entity's events arrive in the order they were written. Then a kill -9 of Kafka Connect
 * mid-drain: every event arrives, a duplicate only ever with the same event_key, and the order
 * of an entity's first copies kept. And the capture probe: its lag is 0 while the connector
 * runs, grows while it is paused, and falls back once it resumes; retention deletes only rows
 * below the connector's committed offset, so a paused connector loses nothing to it, and a
 * connector created again from scratch (its position lost) publishes every event it never did.
 *
 * @mysql
 * @lane exclusive
 */
import { Partitioners, type KafkaMessage, type PartitionMetadata } from 'kafkajs';
import { eventOutboxWriter } from '../../../src/publish/outbox-writer';
import { createEventEncoder } from '../../../src/publish/event-encoder';
import { dataSchemaUri, eventHeaders } from '../../../src/publish/event-headers';
import { createSchemaRegistry } from '../../../src/publish/schema-registry';
import { eventSchemas, registerEventSchemas } from '../../../src/publish/schemas';
import { config, logger, uniqueName } from '../../support/stack';
import { stackUp } from '../../support/stack-control';
import { registerOutboxConnector, type TestOutboxConnector } from '../../support/test-connector';
import { waitFor } from '../../support/wait-for';
import { usePublishEnvironment } from './publish-environment';
import { catalogue, couponExpiredInsert, eventSpec, orderCancelledInsert, type EventInsert, uniqueEventTopics } from './outbox-fixtures';
import { readFileSync } from 'node:fs';
import { captureProbe, type CaptureProbe } from '../../../src/publish/capture-probe';
import { OutboxRetention } from '../../../src/publish/outbox-retention';
import { connectorWatermark } from '../../../src/publish/connector-watermark';
import { systemClock } from '../../../src/core/clock';
import { join } from 'node:path';
import { createTestTopics } from '../../support/topics';

const env = usePublishEnvironment('outbox_router');
const registry = createSchemaRegistry(config.registry);
const stackHome = process.env['TB_STACK_HOME'] ?? join(__dirname, '../../../.stack');
let connector: TestOutboxConnector;

beforeAll(async () => {
  connector = await registerOutboxConnector(env.testDb.name);
});
afterAll(async () => {
  await connector?.remove();
});

type Seen = { topic: string; partition: number; offset: bigint; key: string; headers: Record<string, string>; value: Buffer };

async function newTopics(label: string): Promise<Record<string, string>> {
  const topics = uniqueEventTopics(label);
  await createTestTopics(
    env.admin,
    Object.values(topics).map((topic) => ({ topic, numPartitions: 3 })),
  );
  return topics;
}

/** Every record of `topics`, raw, each counted once by its position. */
async function readRaw(topics: Record<string, string>): Promise<{ seen: Seen[]; stop: () => Promise<void> }> {
  const consumer = env.kafka.consumer({ groupId: uniqueName('tb-router-read'), maxWaitTimeInMs: 200 });
  const seen: Seen[] = [];
  const positions = new Set<string>();
  await consumer.connect();
  await consumer.subscribe({ topics: Object.values(topics), fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }: { topic: string; partition: number; message: KafkaMessage }) => {
      const position = `${topic}/${partition}/${message.offset}`;
      if (positions.has(position)) return;
      positions.add(position);
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString() ?? '']));
      seen.push({ topic, partition, offset: BigInt(message.offset), key: message.key?.toString() ?? '', headers, value: message.value ?? Buffer.alloc(0) });
    },
  });
  return { seen, stop: () => consumer.disconnect() };
}

function routerWriter(topics: Record<string, string>, ids: Record<string, number>) {
  const encoder = createEventEncoder({ catalogue, topics, schemaTexts: eventSchemas(catalogue), registryUrl: config.registry.url });
  encoder.setSchemaIds(ids);
  return eventOutboxWriter(encoder);
}

const firstDue = Date.UTC(2031, 0, 1);

/** Coupons with ids past 2^53, an order that released a coupon, and one coupon that expired three times (three due times). */
function sampleEvents(): EventInsert[] {
  const ids = ['9223372036854775807', '9007199254740993', '42', ...Array.from({ length: 30 }, (_, i) => String(1_000_000 + i * 7919))];
  const coupons = ids.map((id, i) => couponExpiredInsert(id, firstDue + i, 25));
  const thrice = [1, 2, 3].map((n) => couponExpiredInsert('777', firstDue + n * 60_000, 10));
  const order = orderCancelledInsert('9007199254740995', '9223372036854775806', { dueAtMs: firstDue, occurredAtMs: firstDue + 40, userId: '9007199254740993' });
  return [...coupons, ...thrice, order];
}

/** The partition Kafka's default partitioner (murmur2 of the key, as kafkajs's DefaultPartitioner) picks among `partitions`. */
function defaultPartition(key: string, partitions: number): number {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId): PartitionMetadata => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
  }));
  return Partitioners.DefaultPartitioner()({ topic: 'any', partitionMetadata, message: { key, value: null } });
}

test("each event as written: its topic, the entity id as key, the default partitioner's partition, exactly its headers, and the row's payload bytes", async () => {
  const topics = await newTopics('router');
  const ids = await registerEventSchemas(registry, catalogue, topics, { registry: config.registry });
  const events = sampleEvents();
  const byKey = new Map(events.map((e) => [e.event.event_key, e]));

  const write = routerWriter(topics, ids);
  await env.db.transaction((trx) => write(trx, events.slice(0, 20)));
  await env.db.transaction((trx) => write(trx, events.slice(20)));
  const rows = (await env
    .db('event_outbox')
    .whereIn('event_key', [...byKey.keys()])
    .select('event_key', 'payload')) as Array<{ event_key: string; payload: Buffer }>;
  const payloadOf = new Map(rows.map((r) => [r.event_key, r.payload]));
  expect(payloadOf.size).toBe(events.length);

  const routed = await readRaw(topics);
  try {
    await waitFor(`${events.length} events on the wire`, async () => (routed.seen.length >= events.length ? true : undefined), { timeoutMs: 60_000 });
  } finally {
    await routed.stop();
  }
  expect(routed.seen).toHaveLength(events.length);
  expect(new Set(routed.seen.map((m) => m.headers['event_key']))).toEqual(new Set(byKey.keys()));
  for (const m of routed.seen) {
    const written = byKey.get(m.headers['event_key']!)!;
    const eventType = written.event.event_type;
    const spec = eventSpec(eventType);
    expect(m.topic).toBe(topics[eventType]);
    expect(m.key).toBe(written.entityId);
    expect(m.partition).toBe(defaultPartition(written.entityId, 3));
    // Exactly the event's headers, ce_dataschema naming the subject's schema id: no other (no router id, no __debezium.*).
    const occurredAtMs = written.event['occurred_at'] as number;
    expect(m.headers).toEqual({
      ...eventHeaders({
        eventKey: written.event.event_key,
        event: spec,
        entityId: written.entityId,
        occurredAtMs,
        dataSchema: dataSchemaUri(config.registry.url, ids[eventType]!),
      }),
    });
    // The row's payload, untouched: magic byte 0, the subject's schema id, the Avro body.
    expect(m.value.equals(payloadOf.get(written.event.event_key)!)).toBe(true);
    expect([m.value[0], m.value.readUInt32BE(1)]).toEqual([0, ids[eventType]]);
    // Decoded by the id it carries, the entity id exact (several are past 2^53).
    await expect(registry.decode(m.value)).resolves.toMatchObject({
      event_key: written.event.event_key,
      event_type: eventType,
      [spec.idField]: BigInt(written.entityId),
      occurred_at: occurredAtMs,
    });
  }
  // One entity's events in the order written: its offsets grow with its due times.
  const thrice = routed.seen.filter((m) => m.key === '777').sort((a, b) => (a.offset < b.offset ? -1 : 1));
  expect(thrice.map((m) => m.headers['event_key'])).toEqual(events.filter((e) => e.entityId === '777').map((e) => e.event.event_key));
});

test('a kill -9 of Kafka Connect mid-drain loses nothing: duplicates only with the same event_key, each entity in order', async () => {
  const topics = await newTopics('kill');
  const ids = await registerEventSchemas(registry, catalogue, topics, { registry: config.registry });
  const write = routerWriter(topics, ids);
  // 400 coupons, each expiring twice (two due times): 800 events, written 100 per transaction.
  const events = Array.from({ length: 800 }, (_, i) => couponExpiredInsert(String(5_000_000 + (i % 400)), firstDue + Math.floor(i / 400) * 60_000 + i, 5));
  const read = await readRaw(topics);
  try {
    for (let i = 0; i < 400; i += 100) await env.db.transaction((trx) => write(trx, events.slice(i, i + 100)));
    // Mid-drain: some of the first half out, then Connect dies with no chance to flush offsets.
    await waitFor('the first events published', async () => (read.seen.length > 0 ? true : undefined), { timeoutMs: 60_000 });
    process.kill(Number(readFileSync(join(stackHome, 'run/connect.pid'), 'utf8').trim()), 'SIGKILL');
    for (let i = 400; i < 800; i += 100) await env.db.transaction((trx) => write(trx, events.slice(i, i + 100)));
    stackUp();
    await connector.register();
    const wanted = new Set(events.map((e) => e.event.event_key));
    await waitFor('every event published', async () => (new Set(read.seen.map((m) => m.headers['event_key'])).size === wanted.size ? true : undefined), {
      timeoutMs: 120_000,
    });
  } finally {
    await read.stop();
  }
  const seenKeys = read.seen.map((m) => m.headers['event_key']!);
  expect(new Set(seenKeys)).toEqual(new Set(events.map((e) => e.event.event_key)));
  // A duplicate is a second copy of the same message: same key, same value.
  const first = new Map<string, Seen>();
  for (const m of [...read.seen].sort((a, b) => (a.offset < b.offset ? -1 : 1))) {
    const earlier = first.get(m.headers['event_key']!);
    if (earlier === undefined) first.set(m.headers['event_key']!, m);
    else expect({ key: m.key, value: m.value.equals(earlier.value) }).toEqual({ key: earlier.key, value: true });
  }
  // Per entity, the first copies in the order written (both of an entity's events share its partition).
  for (const id of ['5000000', '5000199', '5000399']) {
    const own = events.filter((e) => e.entityId === id).map((e) => e.event.event_key);
    const order = own
      .map((k) => first.get(k)!)
      .sort((a, b) => (a.offset < b.offset ? -1 : 1))
      .map((m) => m.headers['event_key']);
    expect(order).toEqual(own);
  }
});

/**
 * A capture probe of the file's database on a probe topic of its own, every 200 ms (not started).
 * `beforeSubscribe`: awaited before its reader subscribes (a position that comes late).
 */
async function newProbe(beforeSubscribe?: (topic: string) => Promise<unknown>): Promise<CaptureProbe> {
  const topic = uniqueName('tb-probe');
  await createTestTopics(env.admin, [{ topic, numPartitions: 1 }]);
  const group = uniqueName('tb-probe');
  const newConsumer = () => {
    const consumer = env.kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
    if (beforeSubscribe === undefined) return consumer;
    const subscribe = consumer.subscribe.bind(consumer);
    consumer.subscribe = async (subscription) => {
      await beforeSubscribe(topic);
      return subscribe(subscription);
    };
    return consumer;
  };
  return captureProbe({
    dbs: { main: env.db },
    topic,
    group,
    newConsumer,
    intervalMs: 200,
    stallMs: 30_000,
    clock: systemClock,
    logger,
  });
}

/**
 * Retention of event_outbox at 1 ms, held by the published watermark: the committed offset of
 * the file's connector (whichever it is at the time of the pass), no margin. By age alone every
 * row is old at once, so whatever a pass keeps, the watermark kept.
 */
function watermarkRetention(): OutboxRetention {
  return new OutboxRetention({
    db: env.db,
    retentionMs: 1,
    batchSize: 100,
    pauseMs: 0,
    intervalMs: 60_000,
    logger,
    // test-connector.ts: a connector's topic.prefix is its name without dashes.
    published: () => connectorWatermark({ connectUrl: connectRoot, topicPrefix: connector.name.replace(/-/g, ''), marginMs: 0 })(),
  });
}

/** Until every one of `keys` has been seen on the wire at least once. */
async function allOnTheWire(seen: readonly Seen[], keys: ReadonlySet<string>, timeoutMs: number): Promise<void> {
  await waitFor(
    'every event on the wire',
    () => (new Set(seen.map((m) => m.headers['event_key']).filter((k) => keys.has(k!))).size === keys.size ? true : undefined),
    { timeoutMs, intervalMs: 100 },
  );
}

/** The outbox connector's REST resource (pause, resume). */
const connectRoot = `http://127.0.0.1:${process.env['TB_CONNECT_PORT'] ?? '18083'}`;
const connectorUrl = () => `${connectRoot}/connectors/${connector.name}`;

test('the capture probe: lag 0 while the connector runs, growing while it is paused, 0 again once it resumes', async () => {
  const probe = await newProbe();
  probe.start();
  try {
    await waitFor('probes back: lag 0', () => (probe.lagSeconds()['main'] === 0 ? true : undefined), { timeoutMs: 30_000, intervalMs: 50 });
    await fetch(`${connectorUrl()}/pause`, { method: 'PUT' });
    await waitFor('the lag to pass 2 s while paused', () => (probe.lagSeconds()['main']! > 2 ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
    await fetch(`${connectorUrl()}/resume`, { method: 'PUT' });
    await waitFor('probes back after resume: lag 0', () => (probe.lagSeconds()['main'] === 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 50 });
  } finally {
    await fetch(`${connectorUrl()}/resume`, { method: 'PUT' }).catch(() => undefined);
    await probe.stop();
  }
});

test("probes written before the reader has a position (as with Kafka's default group.initial.rebalance.delay.ms) do not hold the lag: it falls back to 0", async () => {
  // The reader subscribes only once three probes are on the wire: a new group starts at the
  // end of the topic, so it never sees them. Before, they stayed the oldest pending for good.
  const onTheWire = async (topic: string) => (await env.admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  const probe = await newProbe((topic) =>
    waitFor('three probes on the wire before the reader subscribes', async () => ((await onTheWire(topic)) >= 3 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
    }),
  );
  probe.start();
  try {
    // A probe back (so the reader reads), and nothing pending: the three unseen ones too.
    await waitFor(
      'lag 0 once a later probe is back',
      () => (probe.confirmedAgeMs('main') !== undefined && probe.lagSeconds()['main'] === 0 ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 20 },
    );
  } finally {
    await probe.stop();
  }
});

test("retention deletes no event_outbox row the connector's committed offset is not past: a connector paused longer than the retention loses nothing", async () => {
  const topics = await newTopics('retention');
  const ids = await registerEventSchemas(registry, catalogue, topics, { registry: config.registry });
  const probe = await newProbe();
  // Retention of 1 ms: by age alone every row is old at once. Held by age alone (were the
  // watermark not heeded), the passes while paused would delete the events' rows.
  const retention = watermarkRetention();
  const events = Array.from({ length: 20 }, (_, i) => couponExpiredInsert(String(6_000_000 + i), firstDue + i, 25));
  const keys = new Set(events.map((e) => e.event.event_key));
  const rowsOfEvents = async () =>
    Number(
      (
        (await env
          .db('event_outbox')
          .whereIn('event_key', [...keys])
          .count({ n: '*' })) as Array<{ n: number }>
      )[0]!.n,
    );
  const routed = await readRaw(topics);
  probe.start();
  try {
    await waitFor('a first probe seen', () => (probe.confirmedAgeMs('main') !== undefined ? true : undefined), { timeoutMs: 30_000, intervalMs: 50 });
    await fetch(`${connectorUrl()}/pause`, { method: 'PUT' });
    await waitFor('the lag to pass 2 s while paused', () => (probe.lagSeconds()['main']! > 2 ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
    await env.db.transaction((trx) => routerWriter(topics, ids)(trx, events));

    // Passes while the connector is paused: rows written after the watermark stay, however old.
    await retention.purgeOnce();
    await retention.purgeOnce();
    expect(await rowsOfEvents()).toBe(events.length);

    await fetch(`${connectorUrl()}/resume`, { method: 'PUT' });
    await allOnTheWire(routed.seen, keys, 60_000);
    // Once the connector's committed offset is past them (a probe of a later second acknowledged,
    // its offset flushed), they are below the watermark and go.
    await waitFor('their rows purged', async () => ((await retention.purgeOnce()) >= 0 && (await rowsOfEvents()) === 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
  } finally {
    await fetch(`${connectorUrl()}/resume`, { method: 'PUT' }).catch(() => undefined);
    await Promise.all([probe.stop(), routed.stop()]);
  }
});

test('the connector lost its position (deleted, created again from scratch) after a pause longer than the retention: every event still in event_outbox is published again, once per event_key', async () => {
  const topics = await newTopics('recreated');
  const ids = await registerEventSchemas(registry, catalogue, topics, { registry: config.registry });
  const probe = await newProbe();
  const retention = watermarkRetention();
  const events = Array.from({ length: 30 }, (_, i) => couponExpiredInsert(String(7_000_000 + i), firstDue + i, 25));
  const keys = new Set(events.map((e) => e.event.event_key));
  const routed = await readRaw(topics);
  probe.start();
  try {
    await waitFor('a first probe seen', () => (probe.confirmedAgeMs('main') !== undefined ? true : undefined), { timeoutMs: 30_000, intervalMs: 50 });
    await fetch(`${connectorUrl()}/pause`, { method: 'PUT' });
    await env.db.transaction((trx) => routerWriter(topics, ids)(trx, events));
    await retention.purgeOnce();
    // Its offsets gone with it: a new connector starts from a snapshot of the table, which
    // retention kept (the old connector's committed offset was short of every event).
    await connector.remove();
    connector = await registerOutboxConnector(env.testDb.name);
    await allOnTheWire(routed.seen, keys, 90_000);
  } finally {
    await Promise.all([probe.stop(), routed.stop()]);
  }
  const ours = routed.seen.filter((m) => keys.has(m.headers['event_key']!));
  // Once each: the paused connector had published none of them.
  expect(ours).toHaveLength(keys.size);
  expect(new Set(ours.map((m) => m.headers['event_key']))).toEqual(keys);
});
