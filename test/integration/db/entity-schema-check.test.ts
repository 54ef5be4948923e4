/**
 * The entities file against real tables (information_schema of the stack's MariaDB): the
 * shipped default matches the migrated demo tables, a seed-style schema matches its file, and
 * each kind of mismatch is named with its fix.
 *
 * @mysql
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEntityFile } from '../../../src/core/entity-file';
import { ConfigError } from '../../../src/core/errors';
import { checkAnsweringSchemas } from '../../../src/db/check-entity-schema';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { createTablesFrom } from '../../support/sql-file';
import { integerColumnType } from '../../support/stack-flavour';

/** A parsed JSON fixture, edited field by field to break one rule at a time. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Fixture = Record<string, any>;

const root = join(__dirname, '../../..');
const defaultCatalogue = parseEntityFile(readFileSync(join(root, 'entities/default.json'), 'utf8'), 'entities/default.json');

// The shipped example of a team's own tables: seed 003's t_order as printed there, and a wallet
// coupon table in seed 001's style, with their entities file.
const shop = join(root, 'examples/shop');

function seedFile(): { entities: Array<Fixture> } {
  return JSON.parse(readFileSync(join(shop, 'entities.json'), 'utf8')) as { entities: Array<Fixture> };
}

async function problemsOf(db: TestDatabase, file: unknown): Promise<string[]> {
  try {
    await checkAnsweringSchemas({ main: db.db }, parseEntityFile(file, 'seed.json'), { main: db.name });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
  return [];
}

let demo: TestDatabase;
let seed: TestDatabase;

beforeAll(async () => {
  demo = await createTestDatabase('schema-check-demo');
  seed = await createTestDatabase('schema-check-seed', { migrate: false });
  await createTablesFrom(seed.db, join(shop, 'schema.sql'));
});

afterAll(async () => {
  await Promise.allSettled([demo?.drop(), seed?.drop()]);
});

test('the shipped default matches the demo tables migrate creates', async () => {
  const { schema } = await checkAnsweringSchemas({ main: demo.db }, defaultCatalogue, { main: demo.name });
  expect([...schema.keys()].sort()).toEqual(['main.coupons', 'main.orders']);
  expect(schema.get('main.coupons')!.columns.get('id')).toMatchObject({ dataType: 'bigint', nullable: false });
});

test('the shipped seed-style example (seed 003 t_order, Chinese status strings, an epoch-ms due column) matches its file', async () => {
  await expect(problemsOf(seed, seedFile())).resolves.toEqual([]);
});

test('an unknown table or column, a wrong type, a value the column cannot hold and a missing index are each named with the fix', async () => {
  const file = seedFile();
  const [order, coupon] = file.entities as [Fixture, Fixture];
  order['transitions'][0].set.cancel_reson = { value: 'TIMEOUT' };
  order['transitions'][0].set.cancel_reason = { value: 'T'.repeat(65) };
  order['transitions'][0].index = 'idx_missing';
  coupon['status'].values.push('已经过期了的券'); // 7 characters: fits VARCHAR(8)
  coupon['status'].values.push('已经过期了的优惠券'); // 9: does not
  coupon['transitions'][0].due = { column: 'expire_at_ms', kind: 'datetime' };
  coupon['transitions'][1].event.fields = [{ name: 'missing', column: 'no_such_column' }];
  file.entities.push({
    ...structuredClone(coupon),
    name: 'ghost',
    table: 'ghost_table',
    transitions: [{ ...structuredClone(coupon['transitions'][1]), event: { ...coupon['transitions'][1].event, type: 'GHOST' } }],
  });
  const problems = await problemsOf(seed, file);
  expect(problems).toEqual(
    expect.arrayContaining([
      `t_order.cancelled (${seed.name}.t_order): assigned column cancel_reson does not exist`,
      `t_order.cancelled (${seed.name}.t_order): "${'T'.repeat(65)}" is longer than column cancel_reason (varchar(64)) holds`,
      `t_order.cancelled (${seed.name}.t_order): index idx_missing does not exist; the scanner and backfill page through (status, due, id): CREATE INDEX idx_missing ON ${seed.name}.t_order (status, expire_time, id)`,
      `user_coupon (${seed.name}.user_coupon): "已经过期了的优惠券" is longer than column status (varchar(8)) holds`,
      `user_coupon.expired (${seed.name}.user_coupon): due column expire_at_ms is ${integerColumnType('bigint', 20)}; kind datetime needs DATETIME or TIMESTAMP (or declare epoch_ms / epoch_s)`,
      `user_coupon.lock_timeout (${seed.name}.user_coupon): event USER_COUPON_UNLOCKED field missing: column no_such_column does not exist`,
      `ghost: table ${seed.name}.ghost_table does not exist`,
    ]),
  );
  expect(problems).toHaveLength(7);
});

test('an integer status column refuses string values and a code out of its range', async () => {
  await seed.db.raw(
    'CREATE TABLE task (id BIGINT PRIMARY KEY, state TINYINT UNSIGNED NOT NULL, deadline_s INT NOT NULL, KEY idx_state_deadline (state, deadline_s))',
  );
  const file = {
    entities: [
      {
        name: 'task',
        table: 'task',
        id: 'id',
        status: { column: 'state', type: 'integer' },
        transitions: [
          {
            name: 'timed_out',
            from: [1, 2],
            to: 300,
            due: { column: 'deadline_s', kind: 'epoch_s' },
            index: 'idx_state_deadline',
            event: { type: 'TASK_TIMED_OUT', ceType: 't', avroName: 'x.TaskTimedOut', idField: 'task_id', summary: 's' },
          },
        ],
      },
    ],
  };
  await expect(problemsOf(seed, file)).resolves.toEqual([
    `task.timed_out (${seed.name}.task): 300 does not fit column state (${integerColumnType('tinyint unsigned', 3)})`,
  ]);
  file.entities[0]!.transitions[0]!.to = 9;
  await expect(problemsOf(seed, file)).resolves.toEqual([]);
});
