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

/** Collects every CDC event of one table topic whose key is one of `ids`. */
async function tail(topic: string, ids: () => Set<string>): Promise<Seen[]> {
  const admin = kafka.admin();
  await admin.connect();
  await waitFor(`Debezium to create ${topic}`, async () => ((await admin.listTopics()).includes(topic) ? true : undefined), { timeoutMs: 60_000 });
  await admin.disconnect();

  const seen: Seen[] = [];
  consumer = kafka.consumer({ groupId: uniqueName('tb-cdc'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
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
  const [id] = await db('coupons').insert({ user_id: 42, status: 'ACTIVE', expire_time: expireTime });
  await db('coupons').where({ id }).update({ status: 'USED', version: db.raw('version + 1') });
  await db('coupons').where({ id }).delete();

  const seen = await tail(config.cdc.couponsTopic, () => new Set([String(id)]));
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
  const [id] = await db('orders').insert({ user_id: 7, status: 'UNPAID', expire_time: expireTime });

  await consumer?.disconnect();
  const seen = await tail(config.cdc.ordersTopic, () => new Set([String(id)]));
  await waitFor('the order create event', () => (seen.length >= 1 ? true : undefined), { timeoutMs: 60_000 });
  expect(seen[0]?.event).toMatchObject({ kind: 'change', op: 'c', after: { id, status: 'UNPAID', expire_time: expireTime.getTime() } });
});
