/**
 * Debezium is real: row changes written with mysql2 arrive on the CDC topics as create, update
 * and delete envelopes with before and after images, DATETIME(3) decodes to the exact UTC instant
 * written, and a delete is followed by its tombstone.
 */
import { Consumer, Kafka } from 'kafkajs';
import { createDb, Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { CdcEvent, decodeCdcValue } from '../../../src/core/cdc-envelope';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

type Seen = { key: string; event: CdcEvent };

let db: Db;
let kafka: Kafka;
let consumer: Consumer | undefined;

beforeAll(() => {
  db = createDb(config.db);
  kafka = createKafka(config.kafka, logger, '-test');
});

afterAll(async () => {
  await consumer?.disconnect();
  await db.destroy();
});

/** The row id of a Debezium key (with or without the schema wrapper); other tests' poison keys are not JSON. */
function rowIdOfKey(key: Buffer | null): string | undefined {
  try {
    const json = JSON.parse(key?.toString() ?? 'null') as { payload?: { id?: number }; id?: number } | null;
    const id = json?.payload?.id ?? json?.id;
    return id === undefined ? undefined : String(id);
  } catch {
    return undefined;
  }
}

/** The current end of a CDC topic (global setup made sure Debezium created it). */
async function endOffsets(topic: string): Promise<Array<{ partition: number; offset: string }>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.high }));
  } finally {
    await admin.disconnect();
  }
}

/**
 * Collects every CDC event of one table topic, from `from` on, whose key is one of `ids`.
 * Starting at offsets taken before the test's writes keeps the test independent of how much
 * history the topic holds.
 */
async function tail(topic: string, from: Array<{ partition: number; offset: string }>, ids: () => Set<string>): Promise<Seen[]> {
  const groupId = uniqueName('tb-cdc');
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.setOffsets({ groupId, topic, partitions: from });
  } finally {
    await admin.disconnect();
  }
  const seen: Seen[] = [];
  consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const id = rowIdOfKey(message.key);
      if (id !== undefined && ids().has(id)) seen.push({ key: id, event: decodeCdcValue(message.value) });
    },
  });
  return seen;
}

test('a coupon insert, update and delete arrive as c, u, d and a tombstone', async () => {
  const expireTime = new Date(Date.UTC(2031, 0, 2, 3, 4, 5, 678));
  const from = await endOffsets(config.cdc.couponsTopic);
  const [id] = await db('coupons').insert({ user_id: 42, status: 'ACTIVE', expire_time: expireTime });
  await db('coupons').where({ id }).update({ status: 'USED', version: db.raw('version + 1') });
  await db('coupons').where({ id }).delete();

  const seen = await tail(config.cdc.couponsTopic, from, () => new Set([String(id)]));
  await waitFor('create, update, delete and tombstone', () => (seen.length >= 4 ? true : undefined), { timeoutMs: 60_000 });

  const [created, updated, deleted, tombstone] = seen.map((s) => s.event);
  expect(created).toMatchObject({ kind: 'change', op: 'c', before: null, after: { id, status: 'ACTIVE', user_id: 42 } });
  // DATETIME(3) arrives as epoch milliseconds of the UTC wall-clock value that was written.
  expect(created?.kind === 'change' && created.after?.['expire_time']).toBe(expireTime.getTime());
  expect(created).toMatchObject({ source: { table: 'coupons', db: config.db.database } });

  expect(updated).toMatchObject({ kind: 'change', op: 'u', before: { id, status: 'ACTIVE', version: 0 }, after: { id, status: 'USED', version: 1 } });
  expect(deleted).toMatchObject({ kind: 'change', op: 'd', before: { id, status: 'USED' }, after: null });
  expect(tombstone).toEqual({ kind: 'tombstone' });
});

test('an order insert arrives on the orders topic', async () => {
  const expireTime = new Date(Date.UTC(2031, 5, 6, 7, 8, 9, 10));
  const from = await endOffsets(config.cdc.ordersTopic);
  const [id] = await db('orders').insert({ user_id: 7, status: 'UNPAID', expire_time: expireTime });

  await consumer?.disconnect();
  const seen = await tail(config.cdc.ordersTopic, from, () => new Set([String(id)]));
  await waitFor('the order create event', () => (seen.length >= 1 ? true : undefined), { timeoutMs: 60_000 });
  expect(seen[0]?.event).toMatchObject({ kind: 'change', op: 'c', after: { id, status: 'UNPAID', expire_time: expireTime.getTime() } });
});
