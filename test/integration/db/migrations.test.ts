/**
 * Migrations apply, are idempotent and reverse cleanly, in a database of the test's own; and
 * the connection runs in UTC so DATETIME(3) round-trips to the exact instant.
 *
 * @mysql
 * @lane isolated
 */
import type { Db } from '../../../src/db/knex';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase('migrations', { migrate: false });
  db = testDb.db;
});

afterAll(async () => {
  await testDb?.drop();
});

async function indexColumns(table: string, index: string): Promise<string[]> {
  const [rows] = (await db.raw(
    'SELECT column_name AS c FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? AND index_name = ? ORDER BY seq_in_index',
    [testDb.name, table, index],
  )) as [Array<{ c: string }>];
  return rows.map((r) => r.c);
}

/** Per index on the table: whether it is unique (NON_UNIQUE = 0) and its columns in order. */
async function indexes(table: string): Promise<Record<string, { unique: boolean; columns: string[] }>> {
  const [rows] = (await db.raw(
    'SELECT index_name AS i, non_unique AS n, column_name AS c FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? ORDER BY index_name, seq_in_index',
    [testDb.name, table],
  )) as [Array<{ i: string; n: number | string; c: string }>];
  const out: Record<string, { unique: boolean; columns: string[] }> = {};
  for (const r of rows) (out[r.i] ??= { unique: Number(r.n) === 0, columns: [] }).columns.push(r.c);
  return out;
}

test('apply, re-apply, roll back and apply again', async () => {
  await db.migrate.latest();
  const [, again] = (await db.migrate.latest()) as [number, string[]];
  expect(again).toEqual([]);
  await expect(indexColumns('coupons', 'idx_coupons_status_expire_id')).resolves.toEqual(['status', 'expire_time', 'id']);
  await expect(indexColumns('orders', 'idx_orders_status_expire_id')).resolves.toEqual(['status', 'expire_time', 'id']);

  await db.migrate.rollback(undefined, true);
  await expect(db.schema.hasTable('coupons')).resolves.toBe(false);
  await expect(db.schema.hasTable('orders')).resolves.toBe(false);

  await db.migrate.latest();
  await expect(db.schema.hasTable('coupons')).resolves.toBe(true);
});

test('event_outbox keeps a ce_type as long as the entities file allows and a ce_dataschema as long as the registry URL allows, whole', async () => {
  await db.migrate.latest();
  const ceType = `timebucket.${'t'.repeat(189)}`;
  // TB_REGISTRY_URL at its 990 characters, and the largest schema id.
  const registryUrl = `https://${'r'.repeat(958)}.example/apis/ccompat/v7`;
  const dataSchema = `${registryUrl}/schemas/ids/2147483647`;
  expect([ceType.length, registryUrl.length]).toEqual([200, 990]);
  await db.raw(
    "INSERT IGNORE INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload) VALUES ('k-wide', 't', '1', 'COUPON_EXPIRED', ?, '2026-12-03T00:00:00.000Z', ?, x'00')",
    [ceType, dataSchema],
  );
  const [[row]] = (await db.raw("SELECT ce_type, ce_dataschema FROM event_outbox WHERE event_key = 'k-wide'")) as [
    [{ ce_type: string; ce_dataschema: string }],
  ];
  expect(row).toEqual({ ce_type: ceType, ce_dataschema: dataSchema });
  await db.raw("DELETE FROM event_outbox WHERE event_key = 'k-wide'");
});

test('event_outbox.event_key has the unique index uq_event_outbox_event_key (invariant I4 rests on it)', async () => {
  await db.migrate.latest();
  const outbox = await indexes('event_outbox');
  expect(outbox['uq_event_outbox_event_key']).toEqual({ unique: true, columns: ['event_key'] });
  // The only unique index besides the primary key.
  expect(
    Object.entries(outbox)
      .filter(([, ix]) => ix.unique)
      .map(([name]) => name)
      .sort(),
  ).toEqual(['PRIMARY', 'uq_event_outbox_event_key']);
});

const DROP_RELAY_OUTBOX = '20270101000000-drop-relay-outbox';

test('the latest migrations leave no outbox or outbox_poison; dropping them is refused while either holds an unpublished event', async () => {
  await db.migrate.latest();
  await expect(db.schema.hasTable('outbox')).resolves.toBe(false);
  await expect(db.schema.hasTable('outbox_poison')).resolves.toBe(false);

  // Back to just before the drop: the relay's tables, as a database still on the relay has them.
  const [, undone] = (await db.migrate.down({ name: DROP_RELAY_OUTBOX })) as [number, string[]];
  expect(undone).toEqual([DROP_RELAY_OUTBOX]);
  await expect(db.schema.hasTable('outbox')).resolves.toBe(true);
  await expect(db.schema.hasTable('outbox_poison')).resolves.toBe(true);
  const relayRow = { event_key: 'k-relay', event_type: 'COUPON_EXPIRED', entity_type: 'coupon', entity_id: 1, payload: '{}' };
  await db('outbox').insert([relayRow, { ...relayRow, event_key: 'k-relay-2', entity_id: 2, published_at: db.raw('NOW(3)') }]);

  // An unpublished row: refused, the tables and the row kept.
  await expect(db.migrate.latest()).rejects.toMatchObject({ code: 'MIGRATION_REFUSED', message: expect.stringContaining('outbox holds 1 unpublished events') });
  await expect(db('outbox').count({ n: '*' })).resolves.toEqual([{ n: 2 }]);
  await expect(db.schema.hasTable('outbox_poison')).resolves.toBe(true);

  // Published, but a row set aside: refused too.
  await db('outbox').update({ published_at: db.raw('NOW(3)') });
  await db('outbox_poison').insert({
    id: 3,
    event_key: 'k-poison',
    event_type: 'COUPON_EXPIRED',
    entity_type: 'coupon',
    entity_id: 3,
    payload: '{',
    created_at: db.raw('NOW(3)'),
    reason: 'a test',
    set_aside_by: 'test',
  });
  await expect(db.migrate.latest()).rejects.toMatchObject({
    code: 'MIGRATION_REFUSED',
    message: expect.stringContaining('outbox_poison holds 1 events set aside'),
  });
  await expect(db.schema.hasTable('outbox')).resolves.toBe(true);

  // Nothing left to publish: both go, published history and all.
  await db('outbox_poison').delete();
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  expect(applied).toEqual([DROP_RELAY_OUTBOX]);
  await expect(db.schema.hasTable('outbox')).resolves.toBe(false);
  await expect(db.schema.hasTable('outbox_poison')).resolves.toBe(false);
});

test('the state machines are enforced by the schema', async () => {
  await db.migrate.latest();
  await expect(db('coupons').insert({ user_id: 1, status: 'BOGUS', expire_time: new Date() })).rejects.toThrow(/chk_coupons_status|CONSTRAINT/i);
  await expect(db('orders').insert({ user_id: 1, status: 'BOGUS', expire_time: new Date() })).rejects.toThrow(/chk_orders_status|CONSTRAINT/i);
});

test('sessions run in UTC and DATETIME(3) keeps milliseconds', async () => {
  await db.migrate.latest();
  const [[zone]] = (await db.raw('SELECT @@session.time_zone AS tz')) as [[{ tz: string }]];
  expect(zone.tz).toBe('+00:00');

  const instant = new Date(Date.UTC(2030, 11, 31, 23, 59, 59, 999));
  const [id] = await db('coupons').insert({ user_id: 1, status: 'ACTIVE', expire_time: instant });
  const row = (await db('coupons').where({ id }).first()) as { expire_time: Date };
  expect(row.expire_time.toISOString()).toBe('2030-12-31T23:59:59.999Z');
  const [[text]] = (await db.raw('SELECT CAST(expire_time AS CHAR) AS s FROM coupons WHERE id = ?', [id!])) as [[{ s: string }]];
  expect(text.s).toBe('2030-12-31 23:59:59.999');
});
