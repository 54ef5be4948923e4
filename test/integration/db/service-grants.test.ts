/**
 * Least privilege, on the real database: the owner migrates and grants the service account
 * (stack/env.sh: TB_DB_SERVICE_USER, created by the stack with no privileges) exactly
 * db/service-grants.ts. As that account, every statement the service runs works: expiring a
 * coupon, cancelling an order that releases its coupon (each writing its encoded event into
 * event_outbox), reading event_outbox and purging it by retention, the scanner's page claim, the
 * control switches. Everything else is refused: DROP, ALTER, CREATE, DELETE on the business
 * tables, an UPDATE of a column no transition changes or of event_outbox, the migrations' table.
 *
 * @mysql
 * @lane isolated
 */
import { createDb, Db } from '../../../src/db/knex';
import { grantServiceAccess } from '../../../src/db/service-grants';
import type { OutboxWriter } from '../../../src/expire/outbox-writer';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { defaultCatalogue } from '../../support/catalogue';
import { OutboxRetention } from '../../../src/publish/outbox-retention';
import { purgeCutoff, purgeEventOutboxPage } from '../../../src/publish/sql/purge-event-outbox';
import { scanCursorsOf, scanPageClaim } from '../../../src/reconcile/sql/claim-scan-page';
import { readSwitches, setPaused } from '../../../src/ops/control-switch-store';
import { eventWriter } from '../../support/event-writer';
import { outboxKeys } from '../../support/outbox-rows';
import { config, logger } from '../../support/stack';
import { classifyFailure } from '../../../src/core/retry-policy';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

const serviceUser = process.env['TB_DB_SERVICE_USER'] ?? 'timebucket_app';
const servicePassword = process.env['TB_DB_SERVICE_PASSWORD'] ?? 'svc-pw-7Qx2vL9k';

let owner: TestDatabase;
let service: Db;
let outbox: OutboxWriter;

beforeAll(async () => {
  owner = await createTestDatabase('grants');
  // Both accounts: a connection to 127.0.0.1 may be matched as 'localhost' by the server.
  for (const host of ['%', 'localhost']) await grantServiceAccess(owner.db, owner.name, { user: serviceUser, host }, defaultCatalogue);
  service = createDb({ ...config.db, user: serviceUser, password: servicePassword, poolMax: 2 }, { database: owner.name });
  // The writer inserts through the transaction it is given: the service account's.
  outbox = await eventWriter(owner.db, defaultCatalogue);
});

afterAll(async () => {
  await service?.destroy();
  await owner?.drop();
});

/** A row due a second ago, as the owner (the application that owns the data) writes it. */
async function dueRow(table: 'coupons' | 'orders', values: Record<string, unknown>): Promise<{ id: string; expireAtMs: number }> {
  const [id] = await owner.db(table).insert({ user_id: 9, ...values, expire_time: owner.db.raw('NOW(3) - INTERVAL 1 SECOND') });
  const row = (await owner.db(table).where({ id }).first()) as { expire_time: Date };
  return { id: String(id), expireAtMs: row.expire_time.getTime() };
}

test('as the service account, every statement the service runs works', async () => {
  const coupon = await dueRow('coupons', { status: 'ACTIVE' });
  const batches = createTransitionBatches(service, defaultCatalogue, { outbox });
  const expired = await batches.run(transitionOf(defaultCatalogue, 'coupon', 'expired'), [coupon], 'stream');
  expect(expired.transitioned).toHaveLength(1);

  const locked = await dueRow('coupons', { status: 'LOCKED' });
  const order = await dueRow('orders', { status: 'UNPAID', coupon_id: locked.id });
  await owner.db('coupons').where({ id: locked.id }).update({ locked_order_id: order.id });
  const cancelled = await batches.run(transitionOf(defaultCatalogue, 'order', 'cancelled'), [order], 'stream');
  expect(cancelled.transitioned).toHaveLength(1);
  expect(await owner.db('coupons').where({ id: locked.id }).first()).toMatchObject({ status: 'ACTIVE', locked_order_id: null });

  // Both events, encoded into event_outbox by the service account, which reads them back too.
  const couponKey = `coupon-expired-${coupon.id}-${coupon.expireAtMs}-${expired.dbNowMs}`;
  const orderKey = `order-cancelled-${order.id}-${order.expireAtMs}-${cancelled.dbNowMs}`;
  await expect(outboxKeys(service, defaultCatalogue)).resolves.toEqual([couponKey, orderKey]);

  // Retention: a page purge, then a pass, each deleting the one row older than a day.
  const ageBack = (key: string) => owner.db('event_outbox').where({ event_key: key }).update({ created_at: owner.db.raw('NOW(3) - INTERVAL 2 DAY') });
  await ageBack(couponKey);
  const page = await purgeEventOutboxPage(service, await purgeCutoff(service, 86_400_000), null, 100);
  expect(page.deleted).toBe(1);
  await expect(outboxKeys(owner.db, defaultCatalogue)).resolves.toEqual([orderKey]);
  await ageBack(orderKey);
  const retention = new OutboxRetention({ db: service, retentionMs: 86_400_000, batchSize: 100, pauseMs: 0, intervalMs: 60_000, logger, capturedAgeMs: () => 0 });
  await expect(retention.purgeOnce()).resolves.toBe(1);
  await expect(owner.db('event_outbox').count({ n: '*' })).resolves.toEqual([{ n: 0 }]);

  // The scanner and the control switches.
  await expect(scanPageClaim(service, scanCursorsOf(defaultCatalogue)[0]!, { graceMs: 0, intervalMs: 1_000, pageSize: 10 })()).resolves.toBeDefined();
  await setPaused(service, { scope: 'grants-test', what: 'coupon', by: 'test' }, true);
  expect((await readSwitches(service, 'grants-test', ['coupon', 'order', 'scanner'])).switches.get('coupon')!.paused).toBe(true);
});

test.each([
  ['DROP TABLE coupons', 1142],
  ['ALTER TABLE coupons ADD COLUMN note INT', 1142],
  ['CREATE TABLE extra (id INT)', 1142],
  ['DELETE FROM coupons', 1142],
  ['DELETE FROM orders', 1142],
  ['INSERT INTO coupons (user_id, status, expire_time) VALUES (1, \'ACTIVE\', NOW())', 1142],
  ['UPDATE coupons SET user_id = 1', 1143],
  ['UPDATE coupons SET expire_time = NOW()', 1143],
  ['UPDATE orders SET coupon_id = NULL', 1143],
  ['UPDATE event_outbox SET payload = x\'00\'', 1142],
  ['SELECT * FROM knex_migrations', 1142],
  ['DROP DATABASE <this database>', 1044],
])('refused: %s', async (sql, errno) => {
  await expect(service.raw(sql.replace('<this database>', `\`${owner.name}\``))).rejects.toMatchObject({ errno });
});

test('a column grant revoked under the service (an operator\'s slip, a grants rollout half done) makes the expiry wait, not park: it succeeds once the grant is back', async () => {
  const coupon = await dueRow('coupons', { status: 'ACTIVE' });
  const expired = transitionOf(defaultCatalogue, 'coupon', 'expired');
  const batches = createTransitionBatches(service, defaultCatalogue, { outbox });
  const revoke = (verb: 'GRANT' | 'REVOKE') =>
    Promise.all(['%', 'localhost'].map((host) => owner.db.raw(`${verb} UPDATE (\`expired_at\`) ON \`${owner.name}\`.\`coupons\` ${verb === 'GRANT' ? 'TO' : 'FROM'} ?@?`, [serviceUser, host])));
  await revoke('REVOKE');
  try {
    const failure = await batches.run(expired, [coupon], 'stream').then(() => undefined, (err: unknown) => err);
    // ER_COLUMNACCESS_DENIED_ERROR: the same for every entry, and an operator's to fix. Parking
    // each entry after a few tries would empty the stream into the DLQ meanwhile.
    expect(failure).toMatchObject({ errno: 1143 });
    expect(classifyFailure(failure)).toBe('retriable');
  } finally {
    await revoke('GRANT');
  }
  expect((await batches.run(expired, [coupon], 'stream')).transitioned).toHaveLength(1);
});
