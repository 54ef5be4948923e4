/**
 * Snowflake-style ids through the real Debezium: coupons 2^53 + 1 and 2^63 - 1 written by SQL
 * arrive on the CDC topic as bare JSON numbers, and decodeCdcValue + entriesFromChange turn them
 * into entries with the exact decimal id (JSON.parse alone would round both).
 *
 * Debezium captures only the shared database, so the rows go into the shared `coupons` table;
 * an explicit id moves its AUTO_INCREMENT past it, and every later insert (other test files,
 * other runs) would get an id beyond 2^53. So the write happens under LOCK TABLES: insert,
 * delete, reset AUTO_INCREMENT (InnoDB takes max(id) + 1), unlock. Concurrent writers wait a
 * few milliseconds and never see the moved counter.
 *
 * @mysql
 */
import { Consumer, Kafka } from 'kafkajs';
import { createDb, Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { CdcEvent, decodeCdcValue } from '../../../src/core/cdc-envelope';
import { entriesFromChange } from '../../../src/core/bucket-entry';
import { entityOf } from '../../../src/core/entity-catalogue';
import { defaultCatalogue } from '../../support/catalogue';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';
import { cdcTopicOf } from '../../../src/ingest/cdc-topics';

const ABOVE_2_53 = '9007199254740993'; // 2^53 + 1
const MAX_SIGNED = '9223372036854775807'; // 2^63 - 1: Debezium's long mode carries it as is
const IDS = [ABOVE_2_53, MAX_SIGNED];

let db: Db;
let kafka: Kafka;
let consumer: Consumer | undefined;

beforeAll(() => {
  // One connection: LOCK TABLES belongs to the session that took it.
  db = createDb({ ...config.db, poolMax: 1 });
  kafka = createKafka(config.kafka, logger, '-test');
});

afterAll(async () => {
  await consumer?.disconnect();
  await db.destroy();
});

/** The id digits of a Debezium key, read as text (with or without the schema wrapper): no JS number involved. */
function idOfKey(key: Buffer | null): string | undefined {
  return /"id":([0-9]+)\}+$/.exec(key?.toString() ?? '')?.[1];
}

async function endOffsets(topic: string): Promise<Array<{ partition: number; offset: string }>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.high }));
  } finally {
    await admin.disconnect();
  }
}

test('coupons 2^53 + 1 and 2^63 - 1 arrive from Debezium as exact ids and become entries with them', async () => {
  const topic = cdcTopicOf(config.cdc, 'coupons');
  const from = await endOffsets(topic);
  const expireTime = new Date(Date.UTC(2031, 0, 2, 3, 4, 5, 678));

  await db.raw('LOCK TABLES coupons WRITE');
  try {
    await db.raw(`DELETE FROM coupons WHERE id IN (${IDS.join(', ')})`); // left over by an interrupted run
    await db.raw(
      `INSERT INTO coupons (id, user_id, status, expire_time) VALUES (${ABOVE_2_53}, ${MAX_SIGNED}, 'ACTIVE', ?), (${MAX_SIGNED}, ${ABOVE_2_53}, 'ACTIVE', ?)`,
      [expireTime, expireTime],
    );
  } finally {
    await db.raw(`DELETE FROM coupons WHERE id IN (${IDS.join(', ')})`);
    await db.raw('ALTER TABLE coupons AUTO_INCREMENT = 1');
    await db.raw('UNLOCK TABLES');
  }
  const [[{ next }]] = (await db.raw(
    "SELECT CAST(AUTO_INCREMENT AS CHAR) AS next FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'coupons'",
  )) as [[{ next: string }]];
  expect(BigInt(next)).toBeLessThan(2n ** 53n);

  const groupId = uniqueName('tb-cdc-big');
  const admin = kafka.admin();
  await admin.connect();
  await admin.setOffsets({ groupId, topic, partitions: from }).finally(() => admin.disconnect());
  const created = new Map<string, CdcEvent>();
  consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const id = idOfKey(message.key);
      // The create event of each row (its delete and tombstone follow).
      if (id !== undefined && IDS.includes(id) && message.value?.toString().includes('"op":"c"')) created.set(id, decodeCdcValue(message.value));
    },
  });
  await waitFor('both create events', () => (created.size === IDS.length ? true : undefined), { timeoutMs: 60_000 });

  for (const id of [ABOVE_2_53, MAX_SIGNED] as const) {
    const event = created.get(id)!;
    expect(event).toMatchObject({ kind: 'change', op: 'c', after: { id: BigInt(id), status: 'ACTIVE' } });
    // user_id, the other big id, is captured as well (the coupons' digests go by it), exact.
    const user = id === ABOVE_2_53 ? MAX_SIGNED : ABOVE_2_53;
    expect(event.kind === 'change' && event.after?.['user_id']).toBe(BigInt(user));
    if (event.kind !== 'change') throw new Error('not a change');
    const dueAtMs = expireTime.getTime();
    const [transition, ...reminders] = entriesFromChange(entityOf(defaultCatalogue, 'coupon'), event);
    expect(transition).toEqual({ entity: 'coupon', transition: 'expired', id, expireAtMs: dueAtMs });
    // Its fire points (3d and 1d digested by the user, 30m its own) are years ahead.
    expect(reminders.map((r) => [r.id, r.remind])).toEqual([
      [id, { dueAtMs, beforeMs: 3 * 86_400_000, user }],
      [id, { dueAtMs, beforeMs: 86_400_000, user }],
      [id, { dueAtMs, beforeMs: 30 * 60_000 }],
    ]);
  }
});
