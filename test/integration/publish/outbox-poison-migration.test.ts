/**
 * The outbox_poison migration moves rows set aside the old way (left in the outbox, unpublished,
 * claimed_by 'poison' until 9999-12-31) into outbox_poison, and its rollback moves them back.
 * In a database of this file's own.
 *
 * @lane isolated
 */
import type { Db } from '../../../src/db/knex';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase('outbox_poison_migration', { migrate: false });
  db = testDb.db;
});

afterAll(async () => {
  await testDb?.drop();
});

const row = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  event_key: `coupon-expired-${id}-0`,
  event_type: 'COUPON_EXPIRED',
  entity_type: 'coupon',
  entity_id: id,
  payload: '{"not":"an event"}',
  created_at: new Date(Date.UTC(2031, 0, 1)),
  ...extra,
});

const POISON = '20261203000000-create-outbox-poison';
/** Every migration after the poison one, newest first: undone so the test starts just before it. */
const LATER = ['20261210000000-widen-cursor-and-switch-names'];

test('old-style poison rows move to outbox_poison and back; other rows stay where they are', async () => {
  await db.migrate.latest();
  for (const name of LATER) await db.migrate.down({ name });
  await db.migrate.down({ name: POISON });
  await expect(db.schema.hasTable('outbox_poison')).resolves.toBe(false);
  await db('outbox').insert([
    row(1, { claimed_by: 'poison', claim_until: new Date('9999-12-31T00:00:00Z') }),
    row(2),
    row(3, { claimed_by: 'relay-x/0', claim_until: new Date(), published_at: new Date() }),
  ]);

  await db.migrate.up({ name: POISON });
  const outboxIds = async () => ((await db('outbox').orderBy('id').select('id')) as Array<{ id: number }>).map((r) => r.id);
  expect(await outboxIds()).toEqual([2, 3]);
  const [aside] = (await db('outbox_poison').select('*')) as Array<Record<string, unknown>>;
  expect(aside).toMatchObject({ ...row(1), set_aside_by: 'poison', reason: expect.stringMatching(/before outbox_poison existed/) });

  await db.migrate.down({ name: POISON });
  expect(await outboxIds()).toEqual([1, 2, 3]);
  const back = (await db('outbox').where({ id: 1 }).first()) as { claimed_by: string; claim_until: Date; published_at: Date | null };
  expect([back.claimed_by, back.claim_until.getUTCFullYear(), back.published_at]).toEqual(['poison', 9999, null]);
  await expect(db.schema.hasTable('outbox_poison')).resolves.toBe(false);
  await db.migrate.latest();
});
