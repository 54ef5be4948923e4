/**
 * Retention never deletes an event_outbox row whose event Connect has not written, even when
 * later capture probes came back. Connect's producer sends each partition on its own, so the
 * probes, on a topic of their own, come back past events whose partition refuses them. The
 * connector's committed offset stays short of the first record not acknowledged (Connect commits
 * only the acknowledged prefix of a source partition), and retention goes by that. Once the
 * partition takes writes again, the events are published, the offset moves on and retention
 * deletes their rows.
 *
 * The refusing partition: the event topic's max.message.bytes below its records' size. Connect's
 * producer splits a refused batch of several records and sends them again without end, so the
 * partition is stuck while the others go on, as one without a leader or in-sync replicas would
 * be (a lone record would fail the task instead, which the test restarts). min.insync.replicas
 * cannot do it on this one-broker stack: Kafka 3.9 asks for no more in-sync replicas than a
 * partition has (Partition.effectiveMinIsr). The connector is paused while the events and the
 * later probes are written, so one poll hands Connect all of them, sent before the broker
 * answers for any.
 *
 * On each server of the stack (MariaDB; MySQL with GTIDs, whose offsets carry the transaction's
 * commit time), each with a database, an outbox connector, an event topic and a probe topic of
 * its own. Before the fix (retention by the probe's watermark) the pass deleted all five rows.
 *
 * @mysql
 * @lane isolated
 */
import { ConfigResourceTypes, type Admin, type Kafka } from 'kafkajs';
import { createKafka } from '../../../src/kafka/client';
import { captureProbe, type CaptureProbe } from '../../../src/publish/capture-probe';
import { OutboxRetention } from '../../../src/publish/outbox-retention';
import { connectorWatermark, type PublishedWatermark } from '../../../src/publish/connector-watermark';
import { systemClock } from '../../../src/core/clock';
import { config, logger, uniqueName } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { registerOutboxConnector, type TestOutboxConnector } from '../../support/test-connector';
import { createTestTopics } from '../../support/topics';
import { waitFor } from '../../support/wait-for';
import { entityIds, insertCouponEvents, prefixedWriter } from './outbox-fixtures';

const connectUrl = `http://127.0.0.1:${process.env['TB_CONNECT_PORT'] ?? '18083'}`;
let kafka: Kafka;
let admin: Admin;

beforeAll(async () => {
  kafka = createKafka(config.kafka, logger, '-test');
  admin = kafka.admin();
  await admin.connect();
});
afterAll(async () => {
  await admin?.disconnect();
});

/** A capture probe of `db` on a probe topic of its own, every 200 ms (not started). */
async function newProbe(db: TestDatabase): Promise<CaptureProbe> {
  const topic = uniqueName('tb-probe');
  await createTestTopics(admin, [{ topic, numPartitions: 1 }]);
  const group = uniqueName('tb-probe');
  return captureProbe({
    dbs: { main: db.db },
    topic,
    group,
    newConsumer: () => kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 }),
    intervalMs: 200,
    stallMs: 30_000,
    clock: systemClock,
    logger,
  });
}

/**
 * Retention at 1 ms (by age every row is old at once): whatever a pass keeps, the watermark kept.
 * The watermark is the connector's committed offset, less a second for a transaction that wrote
 * its row before a probe's and committed after it (the keeper keeps a minute).
 */
function retentionOf(db: TestDatabase, published: () => Promise<PublishedWatermark>): OutboxRetention {
  return new OutboxRetention({ db: db.db, retentionMs: 1, batchSize: 100, pauseMs: 0, intervalMs: 60_000, logger, published });
}

/** Every record refused by `topic` (larger than its max.message.bytes), or its overrides dropped again (writable). */
async function setMaxMessageBytes(topic: string, value: string | undefined): Promise<void> {
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: value === undefined ? [] : [{ name: 'max.message.bytes', value }] }],
  });
}

/** Until a send to `topic` is refused as too large (the broker has applied the setting). */
async function untilRefused(topic: string): Promise<void> {
  const producer = kafka.producer({ retry: { retries: 0 }, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await waitFor(
      `${topic} refusing a 1 KB record`,
      async () => {
        try {
          await producer.send({ topic, acks: -1, messages: [{ key: 'setup', value: Buffer.alloc(1_024) }] });
          return undefined;
        } catch (err) {
          if (/too large|MESSAGE_TOO_LARGE/i.test(`${String((err as { type?: string }).type)} ${String(err)}`)) return true;
          throw err;
        }
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  } finally {
    await producer.disconnect();
  }
}

async function connectorCall(name: string, method: 'PUT' | 'POST', path: string): Promise<void> {
  const res = await fetch(`${connectUrl}/connectors/${name}${path}`, { method, signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`${method} ${path} of ${name}: HTTP ${res.status} ${await res.text()}`);
}

async function taskState(name: string): Promise<string | undefined> {
  const res = await fetch(`${connectUrl}/connectors/${name}/status`, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) return undefined;
  return ((await res.json()) as { tasks: Array<{ state: string }> }).tasks[0]?.state;
}

const onTheWire = async (topic: string) => (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);

describe.each([1, 2] as const)('on server %i', (server) => {
  let db: TestDatabase;
  let connector: TestOutboxConnector;

  beforeAll(async () => {
    db = await createTestDatabase(`outbox_unpublished_${server}`, { server });
    connector = await registerOutboxConnector(db.name, { server });
  });
  afterAll(async () => {
    await connector?.remove();
    await db?.drop();
  });

  test('an event its topic refused keeps its row, though later probes came back; once published it goes', async () => {
    const { write, topics } = await prefixedWriter(db.db, `unpub${server}`);
    const topic = topics['COUPON_EXPIRED']!;
    await createTestTopics(admin, [{ topic, numPartitions: 1 }]);
    const probe = await newProbe(db);
    // test-connector.ts: the connector's topic.prefix is its name without dashes.
    const watermark = connectorWatermark({ connectUrl, topicPrefix: connector.name.replace(/-/g, ''), marginMs: 1_000 });
    const retention = retentionOf(db, watermark);
    const rowsOf = async (ids: readonly string[]) => Number(((await db.db('event_outbox').whereIn('id', ids).count({ n: '*' })) as Array<{ n: number }>)[0]!.n);
    probe.start();
    try {
      await waitFor('a first probe back', () => (probe.confirmedAgeMs('main') !== undefined ? true : undefined), { timeoutMs: 60_000, intervalMs: 50 });
      // Paused, the connector's binlog reader goes on queueing: on resume one poll hands Connect
      // the events and the probes after them.
      await connectorCall(connector.name, 'PUT', '/pause');
      await setMaxMessageBytes(topic, '100');
      await untilRefused(topic);
      const before = await onTheWire(topic);
      const ids = await insertCouponEvents(db.db, write, entityIds(5));
      const writtenAt = Date.now();
      // Probes written more than 2 s after the events (MariaDB's offsets count whole seconds).
      await waitFor(
        'a probe written 2 s after the events',
        async () => {
          const [[row]] = (await db.db.raw(
            "SELECT COUNT(*) AS n FROM event_outbox WHERE event_type = 'OUTBOX_PROBE' AND created_at > (SELECT MAX(created_at) FROM event_outbox WHERE id IN (?)) + INTERVAL 2 SECOND",
            [ids],
          )) as [[{ n: number }]];
          return Number(row.n) > 0 ? true : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      await connectorCall(connector.name, 'PUT', '/resume');

      // The probes come back past the events...
      await waitFor('a probe written 2 s after the events back', () => (probe.confirmedAgeMs('main')! < Date.now() - writtenAt - 2_000 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 50,
      });
      // ... while the events are not on the wire: their topic refuses them.
      expect(await onTheWire(topic)).toBe(before);
      // The connector's committed offset is known, and short of them: Connect commits only up to the first record not acknowledged.
      const [[{ writtenFrom }]] = (await db.db.raw('SELECT MIN(created_at) AS writtenFrom FROM event_outbox WHERE id IN (?)', [ids])) as [
        [{ writtenFrom: Date }],
      ];
      const held = await watermark();
      expect('before' in held && held.before < writtenFrom).toBe(true);
      await retention.purgeOnce();
      expect(await rowsOf(ids)).toBe(ids.length);

      // The topic takes them again (a failed task restarts from its committed offset): published, then purged.
      await setMaxMessageBytes(topic, undefined);
      if ((await taskState(connector.name)) === 'FAILED') await connectorCall(connector.name, 'POST', '/tasks/0/restart');
      await waitFor('the events on the wire', async () => ((await onTheWire(topic)) >= before + ids.length ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      await waitFor('their rows purged', async () => ((await retention.purgeOnce()) >= 0 && (await rowsOf(ids)) === 0 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
    } finally {
      await setMaxMessageBytes(topic, undefined).catch(() => undefined);
      await connectorCall(connector.name, 'PUT', '/resume').catch(() => undefined);
      await probe.stop();
    }
  });
});
