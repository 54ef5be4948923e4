/**
 * `timebucket explain` finds an event the outbox connector published long after its outbox row
 * was written (Connect stopped for hours, then caught up): the broker stamps the record when it
 * is sent, hours after the row's created_at, and records of other rows lie between. The look
 * reads each partition of the event topic from the outbox row's time to its end as it was when
 * the look began; it does not give up at a record stamped some time after the row and call the
 * event "not yet on the wire". A look that stops at its record limit says so, not "not yet on
 * the wire".
 *
 * The database is the test's own (no connector captures it): the row is moved through the
 * expirer's own transaction, its outbox row's created_at set back two hours, and the event
 * written to a topic of the test's own as the connector would write it (its `event_key` header),
 * stamped now.
 *
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Admin, Kafka } from 'kafkajs';
import { loadConfig } from '../../../src/config';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { parseTopology } from '../../../src/core/topology';
import { systemClock } from '../../../src/core/clock';
import { formatUtc } from '../../../src/core/utc-time';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { explainRow } from '../../../src/cli/explain-command';
import { wireLook } from '../../../src/cli/explain-wire';
import { createKafka } from '../../../src/kafka/client';
import { slackMs } from '../../../src/replay/bucket-window';
import { defaultCatalogue, defaultEntitiesPath } from '../../support/catalogue';
import { eventWriter } from '../../support/event-writer';
import { config, logger } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { createTestTopics } from '../../support/topics';

const topologyPath = join(__dirname, '../../../topics/production.json');
const topology = parseTopology(readFileSync(topologyPath, 'utf8'), topologyPath);
const expired = transitionOf(defaultCatalogue, 'coupon', 'expired');
const HOUR_MS = 3_600_000;
let own: TestDatabase;
let kafka: Kafka;
let admin: Admin;
const topics: string[] = [];

beforeAll(async () => {
  own = await createTestDatabase('explain_late');
  kafka = createKafka(config.kafka, logger, '-test-explain-late');
  admin = kafka.admin();
  await admin.connect();
});

afterAll(async () => {
  if (topics.length > 0) await admin?.deleteTopics({ topics }).catch(() => undefined);
  await admin?.disconnect();
  await own?.drop();
});

/** A coupon moved by the expirer's transaction, its outbox row written `agoMs` before now: its event key and topic. */
async function movedCoupon(agoMs: number): Promise<{ id: string; eventKey: string; topic: string; createdAtMs: number }> {
  const batches = createTransitionBatches(own.db, defaultCatalogue, { outbox: await eventWriter(own.db, defaultCatalogue) });
  const [inserted] = await own.db('coupons').insert({ user_id: 9, face_value: 5, status: 'ACTIVE', expire_time: own.db.raw('NOW(3) - INTERVAL 2 SECOND') });
  const id = String(inserted);
  const due = ((await own.db('coupons').where({ id }).first()) as { expire_time: Date }).expire_time.getTime();
  expect((await batches.run(expired, [{ id, expireAtMs: due }], 'stream')).transitioned).toHaveLength(1);
  await own
    .db('event_outbox')
    .where('event_key', 'like', `coupon-expired-${id}-%`)
    .update({ created_at: own.db.raw(`created_at - INTERVAL ${agoMs / 1000} SECOND`) });
  const row = (await own.db('event_outbox').where('event_key', 'like', `coupon-expired-${id}-%`).first()) as {
    event_key: string;
    topic: string;
    created_at: Date;
  };
  return { id, eventKey: row.event_key, topic: row.topic, createdAtMs: row.created_at.getTime() };
}

async function explainWith(id: string, maxRecords: number) {
  const cfg = loadConfig({ ...process.env, TB_DB_NAME: own.name, TB_ENTITIES: defaultEntitiesPath, TB_TOPOLOGY: topologyPath });
  const wire = wireLook({ kafka, topology, catalogue: defaultCatalogue, groupPrefix: cfg.groupPrefix, maxRecords, clock: systemClock, logger });
  const e = await explainRow(cfg, topology, defaultCatalogue, 'coupon', id, { wire });
  if (!e.found) throw new Error(`coupon ${id} not found`);
  return e.transitions[0]!;
}

test('an event published two hours after its outbox row, behind records of other rows, is found on the wire; a look cut short by its limit says so', async () => {
  const moved = await movedCoupon(2 * HOUR_MS);
  topics.push(moved.topic);
  await createTestTopics(admin, [{ topic: moved.topic, numPartitions: 1 }]);
  const producer = kafka.producer();
  await producer.connect();
  try {
    // Other rows' events the connector published before it stopped (ten minutes after this row),
    // then, once it caught up, this row's, and others after it: all in the one partition.
    const other = (n: number, timestampMs: number) => ({ key: `other-${n}`, value: 'x', timestamp: String(timestampMs), headers: { event_key: `other-${n}` } });
    await producer.send({
      topic: moved.topic,
      acks: -1,
      messages: [
        other(1, moved.createdAtMs + 600_000),
        other(2, moved.createdAtMs + 1_200_000),
        { key: moved.eventKey, value: 'event', headers: { event_key: moved.eventKey } },
        other(3, Date.now()),
      ],
    });
  } finally {
    await producer.disconnect();
  }

  const t = await explainWith(moved.id, 10_000);
  expect(t).toMatchObject({ state: 'transitioned', event: { found: { topic: moved.topic, partition: 0, offset: '2' } } });
  expect(t.verdict).toMatch(new RegExp(`; event ${moved.eventKey} on ${moved.topic.replace(/\./g, '\\.')}, partition 0, offset 2$`));

  // Two records per partition: the look stops before the event and says it was cut short.
  const limited = await explainWith(moved.id, 2);
  expect(limited).toMatchObject({ state: 'transitioned', event: { found: null, complete: false, records: 2 } });
  expect(limited.verdict).not.toContain('not yet on the wire');
  expect(limited.verdict).toContain(
    `: not found in the 2 records read of ${moved.topic} (1 partition) from ${formatUtc(moved.createdAtMs - slackMs(topology))} to its end when the look began, ` +
      "but the look's limit of 2 records (--scan-limit) reached in partition 0: no proof it is not on the wire",
  );
});
