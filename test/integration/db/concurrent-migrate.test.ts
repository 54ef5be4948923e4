/**
 * `migrate` from several processes at once on a new database (replicas migrating at start-up,
 * the test lanes): every one of them succeeds, the schema is applied once, and the lock table
 * keeps its one row. knex alone can insert that row twice in the race, after which nobody can
 * ever take the lock again (db/migrate-latest.ts). Each pool stands for a process.
 *
 * @mysql
 * @lane isolated
 */
import { createDb, type Db } from '../../../src/db/knex';
import { migrateLatest } from '../../../src/db/migrate-latest';
import { MigrationLockedError } from '../../../src/core/errors';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { config } from '../../support/stack';
import { createLogger } from '../../../src/ops/logger';

const logger = createLogger('silent');

const PROCESSES = 4;
const ROUNDS = 3;

const opened: Db[] = [];
const databases: TestDatabase[] = [];

afterAll(async () => {
  await Promise.allSettled(opened.map((db) => db.destroy()));
  await Promise.allSettled(databases.map((d) => d.drop()));
});

async function newDatabase(label: string): Promise<TestDatabase> {
  const testDb = await createTestDatabase(label, { migrate: false });
  databases.push(testDb);
  return testDb;
}

function poolOn(name: string): Db {
  const db = createDb(config.db, { database: name });
  opened.push(db);
  return db;
}

async function lockRows(db: Db): Promise<Array<{ index: number; is_locked: number }>> {
  return (await db('knex_migrations_lock').select('index', 'is_locked').orderBy('index')) as Array<{ index: number; is_locked: number }>;
}

test(`${PROCESSES} processes migrating a new database together all succeed, and it is migrated once`, async () => {
  for (let round = 0; round < ROUNDS; round += 1) {
    const { name, db } = await newDatabase(`race${round}`);
    const pools = Array.from({ length: PROCESSES }, () => poolOn(name));
    const applied = await Promise.all(pools.map((pool) => migrateLatest(pool, { logger, waitMs: 60_000 })));

    const all = (await db('knex_migrations').select('name')) as Array<{ name: string }>;
    expect(all.length).toBeGreaterThan(0);
    // Each migration applied by exactly one of them, and recorded once.
    expect(applied.flat().sort()).toEqual(all.map((m) => m.name).sort());
    expect(new Set(all.map((m) => m.name)).size).toBe(all.length);
    expect(await lockRows(db)).toEqual([{ index: 1, is_locked: 0 }]);
    // And the next migrate, in any of them, finds nothing to do.
    await expect(migrateLatest(pools[0]!, { logger })).resolves.toEqual([]);
  }
});

test('a lock table that the race left with two rows is mended, and migrate goes on', async () => {
  const { db } = await newDatabase('doubled');
  await db.raw('CREATE TABLE knex_migrations_lock (`index` INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, is_locked INT)');
  await db('knex_migrations_lock').insert([{ is_locked: 0 }, { is_locked: 0 }]);
  // What knex alone makes of it: the lock can never be taken.
  await expect(db.migrate.latest()).rejects.toThrow(/already locked/);

  const applied = await migrateLatest(db, { logger, waitMs: 5_000 });
  expect(applied.length).toBeGreaterThan(0);
  expect(await lockRows(db)).toEqual([{ index: 1, is_locked: 0 }]);
});

test('a migrate that finds the lock taken waits for it, and says so when it stays taken', async () => {
  const { db } = await newDatabase('held');
  await migrateLatest(db, { logger });
  await db('knex_migrations_lock').update({ is_locked: 1 });

  const sleeps: number[] = [];
  const held = migrateLatest(db, { logger, waitMs: 1_500, sleep: (ms) => (sleeps.push(ms), new Promise((r) => setTimeout(r, ms))) });
  await expect(held).rejects.toBeInstanceOf(MigrationLockedError);
  await expect(held).rejects.toMatchObject({ code: 'MIGRATION_LOCKED', details: { waitedMs: 1_500 } });
  expect(sleeps.length).toBeGreaterThan(0);

  // Released while a migrate waits: it goes on and finishes.
  const waiting = migrateLatest(db, {
    logger,
    waitMs: 60_000,
    sleep: async (ms) => {
      await db('knex_migrations_lock').update({ is_locked: 0 });
      await new Promise((r) => setTimeout(r, ms));
    },
  });
  await expect(waiting).resolves.toEqual([]);
  expect(await lockRows(db)).toEqual([{ index: 1, is_locked: 0 }]);
});

test('any other failure ends migrate at once: only the lock is waited for', async () => {
  const { name } = await newDatabase('refused');
  const refused = createDb({ ...config.db, password: `${config.db.password}-wrong` }, { database: name });
  opened.push(refused);
  const sleeps: number[] = [];
  await expect(migrateLatest(refused, { logger, waitMs: 60_000, sleep: async (ms) => void sleeps.push(ms) })).rejects.toMatchObject({ errno: 1045 });
  expect(sleeps).toEqual([]);
});
