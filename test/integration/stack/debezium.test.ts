/**
 * Debezium is real: row changes written with mysql2 arrive on the CDC topics as create and
 * update envelopes with before and after images, DATETIME(3) decodes to the exact UTC instant
 * written; and the connector's filter (stack/connect-smt) drops, at the source, every change
 * after which the row is not expirable (updates to another state, deletes, tombstones). Each
 * change carries its transaction's GTID (MySQL's with gtid_mode=ON).
 *
 * @mysql
 */
import { Consumer, Kafka } from 'kafkajs';
import { createDb, Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { CdcEvent, decodeCdcValue } from '../../../src/core/cdc-envelope';
import { config, logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';
import { cdcTopicOf } from '../../../src/ingest/cdc-topics';
import { stackFlavour } from '../../support/stack-flavour';

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

test('changes that leave a coupon expirable arrive as c and u; the others are filtered at the source', async () => {
  const expireTime = new Date(Date.UTC(2031, 0, 2, 3, 4, 5, 678));
  const later = new Date(Date.UTC(2031, 0, 3, 0, 0, 0, 1));
  const from = await endOffsets(cdcTopicOf(config.cdc, 'coupons'));
  const [id] = await db('coupons').insert({ user_id: 42, status: 'ACTIVE', expire_time: expireTime });
  // Filtered: the row leaves its expirable state (as timebucket's own EXPIRED update does).
  await db('coupons')
    .where({ id })
    .update({ status: 'USED', version: db.raw('version + 1') });
  // Kept: back to ACTIVE with a new expire time. Same key, so same partition, after the one
  // above: once it is seen, the filtered change would have been seen before it.
  await db('coupons')
    .where({ id })
    .update({ status: 'ACTIVE', expire_time: later, version: db.raw('version + 1') });
  // Filtered: a delete and its tombstone; then the same id again, kept, as the same-partition marker.
  await db('coupons').where({ id }).delete();
  const recreated = new Date(Date.UTC(2031, 0, 4, 0, 0, 0, 2));
  await db('coupons').insert({ id, user_id: 43, status: 'ACTIVE', expire_time: recreated });

  const seen = await tail(cdcTopicOf(config.cdc, 'coupons'), from, () => new Set([String(id)]));
  await waitFor(
    'the create after the delete',
    () => (seen.some((s) => s.event.kind === 'change' && s.event.after?.['expire_time'] === recreated.getTime()) ? true : undefined),
    { timeoutMs: 60_000 },
  );

  expect(seen.map((s) => (s.event.kind === 'change' ? `${s.event.op}:${String(s.event.after?.['status'])}` : s.event.kind))).toEqual([
    'c:ACTIVE',
    'u:ACTIVE',
    'c:ACTIVE',
  ]);
  const [created, reactivated] = seen.map((s) => s.event);
  expect(created).toMatchObject({ kind: 'change', op: 'c', before: null, after: { id, status: 'ACTIVE' } });
  // The connector carries only the columns timebucket reads (column.include.list): id, status,
  // due, and the user its reminders are digested by.
  expect(created?.kind === 'change' && Object.keys(created.after ?? {}).sort()).toEqual(['expire_time', 'id', 'status', 'user_id']);
  // DATETIME(3) arrives as epoch milliseconds of the UTC wall-clock value that was written.
  expect(created?.kind === 'change' && created.after?.['expire_time']).toBe(expireTime.getTime());
  expect(created).toMatchObject({ source: { table: 'coupons', db: config.db.database } });
  // Each change names its transaction's GTID, in the server's own form: MySQL's server uuid and
  // sequence (gtid_mode=ON, stack/conf/mysql.cnf), MariaDB's domain-server-sequence.
  const gtid = stackFlavour() === 'mysql' ? /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+$/ : /^\d+-\d+-\d+$/;
  expect(seen.map((s) => (s.event.kind === 'change' ? s.event.source?.gtid : undefined))).toEqual([
    expect.stringMatching(gtid),
    expect.stringMatching(gtid),
    expect.stringMatching(gtid),
  ]);
  // Its before image is the filtered change's after image.
  expect(reactivated).toMatchObject({ kind: 'change', op: 'u', before: { id, status: 'USED' }, after: { id, status: 'ACTIVE', expire_time: later.getTime() } });
  await db('coupons').where({ id }).delete();
});

test('an order insert arrives on the orders topic', async () => {
  const expireTime = new Date(Date.UTC(2031, 5, 6, 7, 8, 9, 10));
  const from = await endOffsets(cdcTopicOf(config.cdc, 'orders'));
  const [id] = await db('orders').insert({ user_id: 7, status: 'UNPAID', expire_time: expireTime });

  await consumer?.disconnect();
  const seen = await tail(cdcTopicOf(config.cdc, 'orders'), from, () => new Set([String(id)]));
  await waitFor('the order create event', () => (seen.length >= 1 ? true : undefined), { timeoutMs: 60_000 });
  expect(seen[0]?.event).toMatchObject({ kind: 'change', op: 'c', after: { id, status: 'UNPAID', expire_time: expireTime.getTime() } });
});
