/**
 * Least privilege, on the real database: the owner migrates and grants the service account
 * (stack/env.sh: TB_DB_SERVICE_USER, created by the stack with no privileges) exactly
 * db/service-grants.ts. As that account, every statement the service runs works: expiring a
 * coupon, cancelling an order that releases its coupon (each writing its encoded event into
 * event_outbox), reading event_outbox and purging it by retention, the scanner's page claim, the
 * control switches, reminders and digests, replay's and backfill's reads, the start-up schema
 * check. Everything else is refused: DROP, ALTER, CREATE, DELETE on the business tables, an
 * UPDATE of a column no transition changes or of event_outbox, the migrations' table, and
 * reading a column no statement reads (the personal data the test adds to each table), or `*`.
 * The whole-table SELECT an older migrate granted is gone; a narrower entities file and migrate
 * again take away what it no longer needs, and nothing on a table timebucket never managed.
 *
 * @mysql
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { createDb, Db } from '../../../src/db/knex';
import { checkAnsweringSchemas } from '../../../src/db/check-entity-schema';
import { readOwnPrivileges } from '../../../src/db/sql/read-own-privileges';
import { parseEntityFile } from '../../../src/core/entity-file';
import { readRemindedRows } from '../../../src/expire/sql/read-reminded-rows';
import { readDigestRows } from '../../../src/expire/sql/read-digest-rows';
import { entryStateReader } from '../../../src/replay/sql/read-entry-states';
import { expirableReads } from '../../../src/reconcile/sql/read-expirable-page';
import { grantServiceAccess } from '../../../src/db/apply-service-grants';
import type { OutboxWriter } from '../../../src/publish/outbox-writer';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { entityOf, transitionOf, type EntityCatalogue } from '../../../src/core/entity-catalogue';
import { defaultCatalogue, defaultEntitiesPath } from '../../support/catalogue';
import { OutboxRetention } from '../../../src/publish/outbox-retention';
import { purgeCutoff, purgeEventOutboxPage } from '../../../src/publish/sql/purge-event-outbox';
import { scanPageClaim } from '../../../src/reconcile/sql/claim-scan-page';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { readSwitches, setPaused } from '../../../src/control/sql/switch-store';
import { eventWriter } from '../../support/event-writer';
import { outboxKeys } from '../../support/outbox-rows';
import { config, logger } from '../../support/stack';
import { classifyFailure } from '../../../src/runtime/retry-policy';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

const serviceUser = process.env['TB_DB_SERVICE_USER'] ?? 'timebucket_app';
const servicePassword = process.env['TB_DB_SERVICE_PASSWORD'] ?? 'svc-pw-7Qx2vL9k';

let owner: TestDatabase;
let service: Db;
let outbox: OutboxWriter;

const HOSTS = ['%', 'localhost'];

/** migrate's grants, to both accounts: a connection to 127.0.0.1 may be matched as 'localhost' by the server. */
async function grantBoth(catalogue: EntityCatalogue): Promise<string[]> {
  const revoked: string[] = [];
  for (const host of HOSTS) revoked.push(...(await grantServiceAccess(owner.db, owner.name, { user: serviceUser, host }, catalogue)).revoked);
  return revoked;
}

beforeAll(async () => {
  owner = await createTestDatabase('grants');
  // Personal data no statement of the service reads.
  await owner.db.raw('ALTER TABLE coupons ADD COLUMN holder_email VARCHAR(100) NULL');
  await owner.db.raw('ALTER TABLE orders ADD COLUMN shipping_address VARCHAR(200) NULL');
  // What migrate granted before it granted columns: SELECT on the whole of each mapped table.
  for (const host of HOSTS)
    for (const table of ['coupons', 'orders']) await owner.db.raw(`GRANT SELECT ON \`${owner.name}\`.\`${table}\` TO ?@?`, [serviceUser, host]);
  await grantBoth(defaultCatalogue);
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
  const ageBack = (key: string) =>
    owner
      .db('event_outbox')
      .where({ event_key: key })
      .update({ created_at: owner.db.raw('NOW(3) - INTERVAL 2 DAY') });
  await ageBack(couponKey);
  const page = await purgeEventOutboxPage(service, await purgeCutoff(service, 86_400_000), null, 100);
  expect(page.deleted).toBe(1);
  await expect(outboxKeys(owner.db, defaultCatalogue)).resolves.toEqual([orderKey]);
  await ageBack(orderKey);
  const retention = new OutboxRetention({
    db: service,
    retentionMs: 86_400_000,
    batchSize: 100,
    pauseMs: 0,
    intervalMs: 60_000,
    logger,
    published: async () => ({ before: new Date(Date.UTC(9999, 0)) }),
  });
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
  ["INSERT INTO coupons (user_id, status, expire_time) VALUES (1, 'ACTIVE', NOW())", 1142],
  ['UPDATE coupons SET user_id = 1', 1143],
  ['UPDATE coupons SET expire_time = NOW()', 1143],
  ['UPDATE orders SET coupon_id = NULL', 1143],
  ["UPDATE event_outbox SET payload = x'00'", 1142],
  ['SELECT holder_email FROM coupons', 1143],
  ['SELECT id, shipping_address FROM orders', 1143],
  ['SELECT created_at FROM orders', 1143],
  ['SELECT * FROM coupons', 1142],
  ['SELECT COUNT(*) FROM coupons WHERE holder_email IS NOT NULL', 1143],
  ['SELECT * FROM service_grants', 1142],
  ['SELECT * FROM knex_migrations', 1142],
  ['DROP DATABASE <this database>', 1044],
])('refused: %s', async (sql, errno) => {
  await expect(service.raw(sql.replace('<this database>', `\`${owner.name}\``))).rejects.toMatchObject({ errno });
});

test("a column grant revoked under the service (an operator's slip, a grants rollout half done) makes the expiry wait, not park: it succeeds once the grant is back", async () => {
  const coupon = await dueRow('coupons', { status: 'ACTIVE' });
  const expired = transitionOf(defaultCatalogue, 'coupon', 'expired');
  const batches = createTransitionBatches(service, defaultCatalogue, { outbox });
  const revoke = (verb: 'GRANT' | 'REVOKE') =>
    Promise.all(
      ['%', 'localhost'].map((host) =>
        owner.db.raw(`${verb} UPDATE (\`expired_at\`) ON \`${owner.name}\`.\`coupons\` ${verb === 'GRANT' ? 'TO' : 'FROM'} ?@?`, [serviceUser, host]),
      ),
    );
  await revoke('REVOKE');
  try {
    const failure = await batches.run(expired, [coupon], 'stream').then(
      () => undefined,
      (err: unknown) => err,
    );
    // ER_COLUMNACCESS_DENIED_ERROR: the same for every entry, and an operator's to fix. Parking
    // each entry after a few tries would empty the stream into the DLQ meanwhile.
    expect(failure).toMatchObject({ errno: 1143 });
    expect(classifyFailure(failure)).toBe('retriable');
  } finally {
    await revoke('GRANT');
  }
  expect((await batches.run(expired, [coupon], 'stream')).transitioned).toHaveLength(1);
});

test('SELECT on the columns the statements read only: the whole-table SELECT an older migrate granted is gone', async () => {
  const own = await readOwnPrivileges(service, owner.name);
  expect([...own.tables.keys()].sort()).toEqual([
    'control_switches',
    'event_outbox',
    'event_schema_ids',
    'pacer_state',
    'scanner_cursors',
    'timebucket_heartbeat',
  ]);
  const columns = (table: string, privilege: string) =>
    [...own.columns]
      .filter(([k, ps]) => k.startsWith(`${table}.`) && ps.has(privilege))
      .map(([k]) => k.slice(table.length + 1))
      .sort();
  expect(columns('coupons', 'SELECT')).toEqual(['expire_time', 'face_value', 'id', 'locked_order_id', 'status', 'user_id', 'version']);
  expect(columns('orders', 'SELECT')).toEqual(['cancel_reason', 'coupon_id', 'expire_time', 'id', 'status', 'user_id', 'version']);
  expect(columns('coupons', 'UPDATE')).toEqual(['expired_at', 'locked_order_id', 'status', 'updated_at', 'version']);
});

test('as the service account, the reminders’ and digests’ reads, replay’s and backfill’s, and the start-up schema check work', async () => {
  const coupon = entityOf(defaultCatalogue, 'coupon');
  const expired = transitionOf(defaultCatalogue, 'coupon', 'expired');
  const at = coupon.locations[0]!;
  const [id] = await owner
    .db('coupons')
    .insert({ user_id: 31, status: 'ACTIVE', face_value: 5, holder_email: 'a@example.com', expire_time: owner.db.raw('NOW(3) + INTERVAL 1 HOUR') });
  const dueMs = ((await owner.db('coupons').where({ id }).first()) as { expire_time: Date }).expire_time.getTime();
  const [reminded, digested] = await service.transaction(async (trx) => [
    await readRemindedRows(coupon, expired, at, ['user_id', 'face_value']).run(trx, [String(id)]),
    await readDigestRows(coupon, expired, at, ['face_value']).run(trx, ['31'], { fromMs: dueMs - 1, untilMs: dueMs + 1, dbNowMs: dueMs - 60_000 }),
  ]);
  expect(reminded).toEqual([expect.objectContaining({ id: String(id), columns: { user_id: '31', face_value: '5.00' } })]);
  expect(digested.get('31')).toHaveLength(1);

  const states = await entryStateReader(
    service,
    entityOf(defaultCatalogue, 'order'),
    transitionOf(defaultCatalogue, 'order', 'cancelled'),
    entityOf(defaultCatalogue, 'order').locations[0]!,
  )(['1']);
  expect(states.dbNowMs).toBeGreaterThan(0);
  const backfill = expirableReads(service, coupon, expired, at);
  await expect(backfill.count({})).resolves.toBeGreaterThan(0);
  await expect(backfill.readPage('ACTIVE', {}, null, 100)).resolves.toContainEqual({ id: String(id), expireAtMs: dueMs, user: 31 });
  await expect(checkAnsweringSchemas({ main: service }, defaultCatalogue, { main: owner.name })).resolves.toBeDefined();
});

test('a narrower entities file and migrate again: what it no longer needs is revoked, a grant on a table timebucket never managed is kept', async () => {
  // Another team's table, and their grant to the same account: not timebucket's to revoke.
  await owner.db.raw('CREATE TABLE team_notes (id INT)');
  for (const host of HOSTS) await owner.db.raw(`GRANT SELECT ON \`${owner.name}\`.\`team_notes\` TO ?@?`, [serviceUser, host]);
  // The orders gone from the file (their effect on coupons with them), the coupon's expiry no longer stamping expired_at.
  const file = JSON.parse(readFileSync(defaultEntitiesPath, 'utf8')) as {
    entities: Array<{ name: string; transitions: Array<{ set: Record<string, unknown> }> }>;
  };
  file.entities = file.entities.filter((e) => e.name === 'coupon');
  delete file.entities[0]!.transitions[0]!.set['expired_at'];
  const narrowed = parseEntityFile(file, 'narrowed.json');
  try {
    const revoked = await grantBoth(narrowed);
    const own = await readOwnPrivileges(service, owner.name);
    expect(own.tables.get('orders')).toBeUndefined();
    expect([...own.columns.keys()].filter((k) => k.startsWith('orders.'))).toEqual([]);
    expect(own.columns.get('coupons.expired_at')).toBeUndefined();
    expect(own.columns.get('coupons.locked_order_id')).toBeUndefined();
    expect(own.tables.get('team_notes')).toEqual(new Set(['SELECT']));
    await expect(service.raw('SELECT id FROM orders')).rejects.toMatchObject({ errno: 1142 });
    await expect(service.raw('UPDATE coupons SET expired_at = NULL')).rejects.toMatchObject({ errno: 1143 });
    await expect(service.raw('SELECT locked_order_id FROM coupons')).rejects.toMatchObject({ errno: 1143 });
    await expect(service.raw('SELECT id FROM team_notes')).resolves.toBeDefined();
    const on = (table: string) => `ON \`${owner.name}\`.\`${table}\` FROM '${serviceUser}'@'%'`;
    expect(revoked.filter((s) => s.endsWith("'%'")).sort()).toEqual(
      [
        `REVOKE SELECT (\`locked_order_id\`) ${on('coupons')}`,
        `REVOKE UPDATE (\`expired_at\`) ${on('coupons')}`,
        `REVOKE UPDATE (\`locked_order_id\`) ${on('coupons')}`,
        ...['cancel_reason', 'coupon_id', 'expire_time', 'id', 'status', 'user_id', 'version'].map((c) => `REVOKE SELECT (\`${c}\`) ${on('orders')}`),
        ...['cancel_reason', 'cancel_time', 'status', 'updated_at', 'version'].map((c) => `REVOKE UPDATE (\`${c}\`) ${on('orders')}`),
      ].sort(),
    );
    // The ledger forgot them: a second migrate has nothing left to revoke.
    await expect(grantBoth(narrowed)).resolves.toEqual([]);
  } finally {
    await grantBoth(defaultCatalogue);
  }
  await expect(service.raw('SELECT id, coupon_id FROM orders LIMIT 1')).resolves.toBeDefined();
});
