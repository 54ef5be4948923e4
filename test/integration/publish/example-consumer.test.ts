/**
 * examples/consumer, as a subscribing team runs it, against events an outbox connector
 * published from event_outbox: each event is delivered twice (the connector published the rows,
 * then lost its position, deleted and created again as after a loss of Connect's offsets, and
 * published them again from its snapshot of the table), and the consumer hands each one over
 * once, ids beyond 2^53 exact; an event whose handling failed is handled again when
 * redelivered, not dropped as a duplicate.
 *
 * In a database of this file's own, with its own outbox connector.
 *
 * @lane isolated
 */
import { config, uniqueName } from '../../support/stack';
import { registerOutboxConnector, type TestOutboxConnector } from '../../support/test-connector';
import { waitFor } from '../../support/wait-for';
import { startConsumer } from '../../support/example-consumer';
import { usePublishEnvironment } from './publish-environment';
import { couponDigestInsert, couponReminderInsert, eventInsert, orderCancelledInsert, prefixedWriter } from './outbox-fixtures';
import { createTestTopics } from '../../support/topics';

const env = usePublishEnvironment('example_consumer');
let connector: TestOutboxConnector | undefined;

afterAll(async () => {
  await connector?.remove();
});

test('every event once, with exact 64-bit ids, though each was delivered twice', async () => {
  const { write, topics } = await prefixedWriter(env.db, 'consumer');
  await createTestTopics(
    env.admin,
    Object.values(topics).map((topic) => ({ topic, numPartitions: 2 })),
  );
  /** Records on the event topics so far. */
  const onTheWire = async () => {
    let n = 0;
    for (const topic of Object.values(topics)) n += (await env.admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
    return n;
  };

  const dueAtMs = Date.UTC(2031, 0, 1);
  const t = { dueAtMs, occurredAtMs: dueAtMs + 40, version: 2 };
  const coupons = ['9223372036854775807', '9007199254740993', '42'].map((id) =>
    eventInsert('coupon', 'expired', id, { ...t, columns: { user_id: '9007199254740993' } }),
  );
  const order = orderCancelledInsert('9007199254740995', '9223372036854775806', { ...t, userId: '9007199254740993' });
  const DAY = 86_400_000;
  const reminder = couponReminderInsert('9223372036854775805', { dueAtMs, beforeMs: 1_800_000, userId: '9007199254740993', faceValue: '12.50' });
  const digest = couponDigestInsert(
    '9007199254740993',
    { '9223372036854775804': '5.00', '42': '100.00' },
    { dueAtMs, beforeMs: DAY, windowStartMs: dueAtMs - DAY - 3_600_000 },
  );
  const written = [...coupons, order, reminder, digest];
  // Published first from the binlog, as written; then again from the new connector's snapshot.
  connector = await registerOutboxConnector(env.testDb.name);
  await env.db.transaction((trx) => write(trx, written));
  await waitFor('every event published once', async () => ((await onTheWire()) >= written.length ? true : undefined), { timeoutMs: 60_000, intervalMs: 200 });
  // Its position lost (deleted, created again from scratch): the new one's snapshot publishes every row again.
  await connector.remove();
  connector = await registerOutboxConnector(env.testDb.name);
  await waitFor('every event published twice', async () => ((await onTheWire()) >= 2 * written.length ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  expect(await onTheWire()).toBe(2 * written.length);

  const events: Array<{ key: string; headers: Record<string, string>; value: Record<string, unknown> }> = [];
  const duplicates: string[] = [];
  let failures = 0;
  const stop = await startConsumer({
    brokers: [...config.kafka.brokers],
    registryUrl: config.registry.url,
    topics: Object.values(topics),
    groupId: uniqueName('example-consumer'),
    // The first event handled fails once: it must come back, not be dropped as a duplicate.
    onEvent: (e) => {
      if (failures === 0) {
        failures += 1;
        throw new Error("injected: the consumer's database is down");
      }
      events.push(e);
    },
    onDuplicate: (key) => void duplicates.push(key),
  });
  try {
    await waitFor('every event delivered twice', async () => (events.length + duplicates.length === 2 * written.length ? true : undefined), {
      timeoutMs: 60_000,
    });
  } finally {
    await stop();
  }

  expect(failures).toBe(1);
  expect(events.map((e) => e.headers['event_key']).sort()).toEqual(written.map((r) => r.event.event_key).sort());
  expect(duplicates.sort()).toEqual(events.map((e) => e.headers['event_key']).sort());
  const coupon = events.find((e) => e.key === '9223372036854775807')!;
  expect(coupon.value).toMatchObject({ coupon_id: 9223372036854775807n, user_id: 9007199254740993n, due_at: dueAtMs, version: 2n });
  expect(coupon.headers).toMatchObject({ ce_subject: '9223372036854775807', ce_type: 'timebucket.coupon.expired' });
  const cancelled = events.find((e) => e.headers['event_type'] === 'ORDER_CANCELLED')!;
  expect(cancelled.value).toMatchObject({ order_id: 9007199254740995n, coupon_id: 9223372036854775806n, coupon_released: true });
  const soon = events.find((e) => e.headers['event_type'] === 'COUPON_EXPIRING_SOON')!;
  expect(soon.key).toBe('9223372036854775805');
  expect(soon.value).toMatchObject({
    coupon_id: 9223372036854775805n,
    user_id: 9007199254740993n,
    status: 'ACTIVE',
    due_at: dueAtMs,
    remind_before_ms: 1_800_000n,
    face_value: '12.50',
  });
  const digested = events.find((e) => e.headers['event_type'] === 'USER_COUPONS_EXPIRING_SOON')!;
  expect(digested.key).toBe('9007199254740993');
  expect(digested.headers).toMatchObject({ ce_subject: '9007199254740993', ce_type: 'timebucket.coupon.user_expiring_soon' });
  expect(digested.value).toMatchObject({
    user_id: 9007199254740993n,
    remind_before_ms: BigInt(DAY),
    window_start: dueAtMs - DAY - 3_600_000,
    items: [
      { coupon_id: 42n, due_at: dueAtMs, face_value: '100.00' },
      { coupon_id: 9223372036854775804n, due_at: dueAtMs, face_value: '5.00' },
    ],
  });
});
