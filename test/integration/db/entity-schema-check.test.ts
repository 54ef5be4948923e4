/**
 * The entities file against real tables (information_schema of the stack's MariaDB): the
 * shipped default matches the migrated demo tables, a seed-style schema matches its file, and
 * each kind of mismatch is named with its fix.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEntityFile } from '../../../src/core/entity-file';
import { ConfigError } from '../../../src/core/errors';
import { checkEntitySchema } from '../../../src/db/check-entity-schema';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

/** A parsed JSON fixture, edited field by field to break one rule at a time. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Fixture = Record<string, any>;

const root = join(__dirname, '../../..');
const defaultCatalogue = parseEntityFile(readFileSync(join(root, 'entities/default.json'), 'utf8'), 'entities/default.json');

// Seed 003's t_order exactly as printed there, and a coupon table in seed 001's style.
const T_ORDER = `CREATE TABLE t_order (
  id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, order_no VARCHAR(64) NOT NULL, status VARCHAR(32) NOT NULL,
  total_amount DECIMAL(18,2) NOT NULL, expire_time DATETIME NOT NULL, pay_time DATETIME NULL, cancel_time DATETIME NULL,
  cancel_reason VARCHAR(64) NULL, version INT NOT NULL DEFAULT 0, create_time DATETIME NOT NULL, update_time DATETIME NOT NULL,
  UNIQUE KEY uk_order_no (order_no), KEY idx_status_expire_id (status, expire_time, id), KEY idx_user_create_time (user_id, create_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;
const USER_COUPON = `CREATE TABLE user_coupon (
  id BIGINT UNSIGNED PRIMARY KEY, user_id BIGINT UNSIGNED NOT NULL, status VARCHAR(8) NOT NULL, face_value DECIMAL(10,2) NOT NULL,
  expire_at_ms BIGINT NOT NULL, lock_expire_time DATETIME(3) NULL, lock_order_no VARCHAR(64) NULL,
  KEY idx_status_expire (status, expire_at_ms, id), KEY idx_status_lock (status, lock_expire_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;

function seedFile(): { entities: Array<Fixture> } {
  return {
    entities: [
      {
        name: 'order',
        table: 't_order',
        id: 'id',
        status: { column: 'status', type: 'string', values: ['CREATED', 'UNPAID', 'PAID', 'CANCELLED', 'FINISHED'] },
        transitions: [
          {
            name: 'cancelled',
            from: ['UNPAID'],
            to: 'CANCELLED',
            due: { column: 'expire_time', kind: 'datetime' },
            index: 'idx_status_expire_id',
            set: { cancel_reason: { value: 'TIMEOUT' }, cancel_time: { now: 'datetime' }, version: { increment: 1 }, update_time: { now: 'datetime' } },
            event: {
              type: 'T_ORDER_CANCELLED',
              ceType: 'shop.order.cancelled',
              avroName: 'shop.events.OrderCancelled',
              idField: 'order_id',
              summary: 'An unpaid order timed out.',
              fields: [{ name: 'user_id', column: 'user_id' }, { name: 'order_no', column: 'order_no' }, { name: 'total_amount', column: 'total_amount' }],
            },
          },
        ],
      },
      {
        name: 'user_coupon',
        table: 'user_coupon',
        id: 'id',
        status: { column: 'status', type: 'string', values: ['待使用', '已锁定', '已使用', '已过期'] },
        transitions: [
          {
            name: 'expired',
            from: ['待使用', '已锁定'],
            to: '已过期',
            due: { column: 'expire_at_ms', kind: 'epoch_ms' },
            index: 'idx_status_expire',
            event: { type: 'USER_COUPON_EXPIRED', ceType: 'shop.coupon.expired', avroName: 'shop.events.CouponExpired', idField: 'coupon_id', summary: 'A coupon expired.', fields: [{ name: 'face_value', column: 'face_value' }] },
          },
          {
            name: 'lock_timeout',
            from: ['已锁定'],
            to: '待使用',
            due: { column: 'lock_expire_time', kind: 'datetime' },
            index: 'idx_status_lock',
            set: { lock_order_no: { value: null } },
            event: { type: 'USER_COUPON_UNLOCKED', ceType: 'shop.coupon.unlocked', avroName: 'shop.events.CouponUnlocked', idField: 'coupon_id', summary: 'A coupon lock timed out.' },
          },
        ],
      },
    ],
  };
}

async function problemsOf(db: TestDatabase, file: unknown): Promise<string[]> {
  try {
    await checkEntitySchema(db.db, parseEntityFile(file, 'seed.json'), db.name);
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
  await seed.db.raw(T_ORDER);
  await seed.db.raw(USER_COUPON);
});

afterAll(async () => {
  await Promise.allSettled([demo?.drop(), seed?.drop()]);
});

test('the shipped default matches the demo tables migrate creates', async () => {
  const schema = await checkEntitySchema(demo.db, defaultCatalogue, demo.name);
  expect([...schema.keys()].sort()).toEqual(['coupons', 'orders']);
  expect(schema.get('coupons')!.columns.get('id')).toMatchObject({ dataType: 'bigint', nullable: false });
});

test('a seed-style schema (seed 003 t_order, Chinese status strings, an epoch-ms due column) matches its file', async () => {
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
  file.entities.push({ ...structuredClone(coupon), name: 'ghost', table: 'ghost_table', transitions: [{ ...structuredClone(coupon['transitions'][1]), event: { ...coupon['transitions'][1].event, type: 'GHOST' } }] });
  const problems = await problemsOf(seed, file);
  expect(problems).toEqual(
    expect.arrayContaining([
      `order.cancelled (${seed.name}.t_order): assigned column cancel_reson does not exist`,
      `order.cancelled (${seed.name}.t_order): "${'T'.repeat(65)}" is longer than column cancel_reason (varchar(64)) holds`,
      `order.cancelled (${seed.name}.t_order): index idx_missing does not exist; the scanner and backfill page through (status, due, id): CREATE INDEX idx_missing ON ${seed.name}.t_order (status, expire_time, id)`,
      `user_coupon (${seed.name}.user_coupon): "已经过期了的优惠券" is longer than column status (varchar(8)) holds`,
      `user_coupon.expired (${seed.name}.user_coupon): due column expire_at_ms is bigint(20); kind datetime needs DATETIME or TIMESTAMP (or declare epoch_ms / epoch_s)`,
      `user_coupon.lock_timeout (${seed.name}.user_coupon): event USER_COUPON_UNLOCKED field missing: column no_such_column does not exist`,
      `ghost: table ${seed.name}.ghost_table does not exist`,
    ]),
  );
  expect(problems).toHaveLength(7);
});

test('an integer status column refuses string values and a code out of its range', async () => {
  await seed.db.raw('CREATE TABLE task (id BIGINT PRIMARY KEY, state TINYINT UNSIGNED NOT NULL, deadline_s INT NOT NULL, KEY idx_state_deadline (state, deadline_s))');
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
  await expect(problemsOf(seed, file)).resolves.toEqual([`task.timed_out (${seed.name}.task): 300 does not fit column state (tinyint(3) unsigned)`]);
  file.entities[0]!.transitions[0]!.to = 9;
  await expect(problemsOf(seed, file)).resolves.toEqual([]);
});
