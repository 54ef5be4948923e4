import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../../src/core/errors';
import { parseEntityFile } from '../../../src/core/entity-file';
import { eventKeyOf, transitionOf } from '../../../src/core/entity-catalogue';

/** A parsed JSON fixture, edited field by field to break one rule at a time. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Fixture = Record<string, any>;

const root = join(__dirname, '../../..');
const defaultText = readFileSync(join(root, 'entities/default.json'), 'utf8');
const defaultFile = (): { entities: Array<Fixture> } => JSON.parse(defaultText);

function problemsOf(json: unknown): string[] {
  try {
    parseEntityFile(json, 'test.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
  throw new Error('expected the file to be refused');
}

describe('the shipped default entities file', () => {
  const catalogue = parseEntityFile(defaultText, 'entities/default.json');

  test("describes today's coupons and orders", () => {
    expect(catalogue.entities.map((e) => [e.name, e.table, e.idColumn, e.status.column])).toEqual([
      ['coupon', 'coupons', 'id', 'status'],
      ['order', 'orders', 'id', 'status'],
    ]);
    expect(catalogue.transitions.map((t) => [t.ref, t.from, t.to, t.due, t.index])).toEqual([
      ['coupon.expired', ['ACTIVE'], 'EXPIRED', { column: 'expire_time', kind: 'datetime' }, 'idx_coupons_status_expire_id'],
      ['order.cancelled', ['UNPAID'], 'CANCELLED', { column: 'expire_time', kind: 'datetime' }, 'idx_orders_status_expire_id'],
    ]);
    expect(catalogue.events.map((e) => e.type)).toEqual(['COUPON_EXPIRED', 'COUPON_EXPIRING_SOON', 'USER_COUPONS_EXPIRING_SOON', 'ORDER_CANCELLED']);
  });

  test("gives today's event keys", () => {
    expect(eventKeyOf(transitionOf(catalogue, 'coupon', 'expired'), '42', 1_700_000_000_123, 1_700_000_000_456)).toBe(
      'coupon-expired-42-1700000000123-1700000000456',
    );
    expect(eventKeyOf(transitionOf(catalogue, 'order', 'cancelled'), '18446744073709551615', 5, 6)).toBe('order-cancelled-18446744073709551615-5-6');
  });

  test('the order cancellation releases the coupon in the same transaction, declared as an effect', () => {
    const cancel = transitionOf(catalogue, 'order', 'cancelled');
    expect(cancel.effects).toEqual([
      {
        entity: 'coupon',
        column: 'locked_order_id',
        from: ['LOCKED'],
        to: 'ACTIVE',
        index: 'idx_coupons_locked_order',
        set: [
          { kind: 'value', column: 'locked_order_id', value: null },
          { kind: 'increment', column: 'version', by: 1 },
        ],
      },
    ]);
    expect(cancel.set).toContainEqual({ kind: 'value', column: 'cancel_reason', value: 'TIMEOUT' });
  });

  test('is frozen', () => {
    expect(Object.isFrozen(catalogue.transitions[0]!.from)).toBe(true);
  });
});

describe('the demo entities file (entities/demo.json, what make run uses)', () => {
  test('is the shipped file with the coupon reminders in seconds, so they fire during the demo, and nothing else changed', () => {
    const demo = JSON.parse(readFileSync(join(root, 'entities/demo.json'), 'utf8')) as Fixture;
    const reminders = demo['entities'][0].transitions[0].reminders;
    expect([reminders.before, reminders.digest.before, reminders.digest.window]).toEqual([['40s', '20s'], ['40s'], '10s']);
    const shipped = defaultFile() as Fixture;
    const asShipped = shipped['entities'][0].transitions[0].reminders;
    Object.assign(reminders, { before: asShipped.before });
    Object.assign(reminders.digest, { before: asShipped.digest.before, window: asShipped.digest.window });
    expect(demo).toEqual(shipped);
    const catalogue = parseEntityFile(readFileSync(join(root, 'entities/demo.json'), 'utf8'), 'entities/demo.json');
    expect(transitionOf(catalogue, 'coupon', 'expired').reminders).toMatchObject({ beforeMs: [40_000, 20_000] });
  });
});

describe('a seed-style file', () => {
  test('Chinese status strings, integer codes, epoch due columns and two transitions of one entity are accepted', () => {
    const catalogue = parseEntityFile(
      {
        entities: [
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
                event: { type: 'USER_COUPON_EXPIRED', ceType: 'shop.coupon.expired', avroName: 'shop.CouponExpired', idField: 'coupon_id', summary: 'expired' },
              },
              {
                name: 'lock_timeout',
                from: ['已锁定'],
                to: '待使用',
                due: { column: 'lock_expire_time', kind: 'datetime' },
                index: 'idx_status_lock',
                set: { lock_order_no: { value: null } },
                event: {
                  type: 'USER_COUPON_UNLOCKED',
                  ceType: 'shop.coupon.unlocked',
                  avroName: 'shop.CouponUnlocked',
                  idField: 'coupon_id',
                  summary: 'unlocked',
                },
              },
            ],
          },
          {
            name: 'task',
            table: 'task',
            id: 'id',
            status: { column: 'state', type: 'integer' },
            transitions: [
              {
                name: 'timed_out',
                from: [1, 2],
                to: 9,
                due: { column: 'deadline_s', kind: 'epoch_s' },
                index: 'idx_state_deadline',
                event: { type: 'TASK_TIMED_OUT', ceType: 'shop.task.timeout', avroName: 'shop.TaskTimedOut', idField: 'task_id', summary: 'timed out' },
              },
            ],
          },
        ],
      },
      'seed.json',
    );
    expect(catalogue.transitions.map((t) => t.ref)).toEqual(['user_coupon.expired', 'user_coupon.lock_timeout', 'task.timed_out']);
    expect(transitionOf(catalogue, 'task', 'timed_out').from).toEqual([1, 2]);
  });
});

describe('a bad entities file is refused with every problem named', () => {
  test('not JSON', () => {
    expect(problemsOf('{ nope')[0]).toMatch(/^not JSON/);
  });

  test('SQL-looking identifiers', () => {
    const file = defaultFile();
    file.entities[0]!['table'] = 'coupons; DROP TABLE coupons';
    file.entities[0]!['status'].column = 'status`';
    file.entities[0]!['transitions'][0].set = { 'expired_at = NOW(), status': { now: 'datetime' } };
    const problems = problemsOf(file);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^entities\.0\.table: not a plain SQL identifier/),
        expect.stringMatching(/^entities\.0\.status\.column: not a plain SQL identifier/),
        expect.stringMatching(/^entities\.0\.transitions\.0\.set\.expired_at = NOW\(\), status: not a plain SQL identifier/),
      ]),
    );
  });

  test('a transition without an event', () => {
    const file = defaultFile();
    delete file.entities[1]!['transitions'][0].event;
    expect(problemsOf(file)).toEqual([expect.stringMatching(/^entities\.1\.transitions\.0\.event: Required/)]);
  });

  test('status values of the wrong type, undeclared, or a to-state that is also a from-state', () => {
    const file = defaultFile();
    file.entities[0]!['transitions'][0].from = ['ACTIVE', 3];
    file.entities[0]!['transitions'][0].to = 'GONE';
    file.entities[1]!['transitions'][0].to = 'UNPAID';
    const problems = problemsOf(file);
    expect(problems).toEqual(
      expect.arrayContaining([
        'entities.0.transitions.0.from.1: status of \'coupon\' is a string; write "3"',
        'entities.0.transitions.0.to.0: "GONE" is not one of the status values of \'coupon\'',
        "entities.1.transitions.0.to: 'UNPAID' is also a from-state: the transition would never end",
      ]),
    );
  });

  test('duplicates, an unknown effect entity, a field that repeats a standard one, an effect index out of range', () => {
    const file = defaultFile();
    file.entities[1]!['name'] = 'coupon';
    file.entities[1]!['transitions'][0].effects[0].entity = 'wallet';
    file.entities[1]!['transitions'][0].event.type = 'COUPON_EXPIRED';
    file.entities[1]!['transitions'][0].event.fields.push({ name: 'due_at', column: 'expire_time' }, { name: 'other', effect: 4 });
    const problems = problemsOf(file);
    expect(problems).toEqual(
      expect.arrayContaining([
        "entities.1.name: duplicate entity 'coupon'",
        "entities.1.transitions.0.effects.0.entity: unknown entity 'wallet'",
        "entities.1.transitions.0.event.type: event type 'COUPON_EXPIRED' is emitted by two transitions",
        "entities.1.transitions.0.event.fields.5.name: field 'due_at' is declared twice (or is a standard field)",
        'entities.1.transitions.0.event.fields.6.effect: no effect 4 on this transition',
      ]),
    );
  });

  test('assigning the status or the id through set, an unknown key, a bad due kind', () => {
    const file = defaultFile();
    file.entities[0]!['transitions'][0].set = { status: { value: 'X' }, id: { increment: 1 } };
    file.entities[0]!['transitions'][0].due = { column: 'expire_time', kind: 'unix' };
    file.entities[0]!['colour'] = 'blue';
    const problems = problemsOf(file);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^entities\.0\.transitions\.0\.due\.kind: Invalid enum value/),
        expect.stringMatching(/^entities\.0: Unrecognized key\(s\) in object: 'colour'/),
      ]),
    );
    file.entities[0]!['transitions'][0].due = { column: 'expire_time', kind: 'datetime' };
    delete file.entities[0]!['colour'];
    expect(problemsOf(file)).toEqual([
      "entities.0.transitions.0.set.status: the status column is not assigned here (the status is set by 'to')",
      "entities.0.transitions.0.set.id: the id column is not assigned here (the status is set by 'to')",
    ]);
  });
});

describe('effects', () => {
  test('a cycle of effects is refused: its locks would be taken in both orders', () => {
    const file = defaultFile();
    // The coupon's expiry now also changes its order: coupon → order → coupon.
    file.entities[0]!['transitions'][0].effects = [{ entity: 'order', column: 'coupon_id', index: 'idx_orders_coupon', from: ['UNPAID'], to: 'CANCELLED' }];
    expect(problemsOf(file)).toEqual([
      'entities: effects form a cycle (coupon → order → coupon): their locks would be taken in both orders and batches would deadlock',
    ]);
  });
});

test('a $ in a table name is refused (a Debezium regex and a Kafka topic name are made of it)', () => {
  const file = defaultFile();
  file.entities[0]!['table'] = 'coupons$2024';
  expect(problemsOf(file)).toEqual([expect.stringMatching(/^entities\.0\.table: not a plain SQL identifier/)]);
});
