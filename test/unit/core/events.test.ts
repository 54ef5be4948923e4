/**
 * The generic event builder: standard fields, then the declared ones, each column field the
 * row's value after the transition (constant, db-now, old + step, or as locked), each effect
 * field a boolean; for the default file, today's COUPON_EXPIRED and ORDER_CANCELLED exactly.
 */
import { transitionOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { columnAfter, eventColumns, transitionEvent } from '../../../src/core/events';
import defaultEntities from '../../../entities/default.json';

const catalogue = parseEntityFile(defaultEntities, 'entities/default.json');
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');
const NOW = 1_700_000_000_500;
const DUE = 1_700_000_000_000;

test('the columns the locking read must return: fields not assigned, or incremented', () => {
  expect(eventColumns(couponExpired)).toEqual(['user_id', 'version']);
  expect(eventColumns(orderCancelled)).toEqual(['user_id', 'coupon_id', 'version']); // cancel_reason is the constant
});

test('COUPON_EXPIRED: standard fields first, then user_id and the version after the transition', () => {
  const event = transitionEvent(
    couponExpired,
    { id: '42', status: 'ACTIVE', dueAtMs: DUE, columns: { user_id: '9', version: 3 } },
    { occurredAtMs: NOW, path: 'stream', effects: [] },
  );
  expect(Object.keys(event)).toEqual([
    'event_key',
    'event_type',
    'coupon_id',
    'from_status',
    'to_status',
    'due_at',
    'occurred_at',
    'path',
    'user_id',
    'version',
  ]);
  expect(event).toEqual({
    event_key: `coupon-expired-42-${DUE}-${NOW}`,
    event_type: 'COUPON_EXPIRED',
    coupon_id: '42',
    user_id: '9',
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    due_at: DUE,
    occurred_at: NOW,
    path: 'stream',
    version: 4,
  });
});

test('ORDER_CANCELLED: reason is the assigned constant, coupon_id as locked (nullable), coupon_released from the effect', () => {
  const row = { id: '7', status: 'UNPAID', dueAtMs: DUE, columns: { user_id: '9', coupon_id: null, version: 0 } };
  expect(transitionEvent(orderCancelled, row, { occurredAtMs: NOW, path: 'replay', effects: [false] })).toEqual({
    event_key: `order-cancelled-7-${DUE}-${NOW}`,
    event_type: 'ORDER_CANCELLED',
    order_id: '7',
    user_id: '9',
    from_status: 'UNPAID',
    to_status: 'CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: null,
    coupon_released: false,
    due_at: DUE,
    occurred_at: NOW,
    path: 'replay',
    version: 1,
  });
});

test('a column after the transition: db-now in the assignment unit, a BIGINT incremented exactly, NULL + 1 stays NULL', () => {
  const t = {
    ...couponExpired,
    set: [
      { kind: 'now', column: 'at_dt', unit: 'datetime' },
      { kind: 'now', column: 'at_ms', unit: 'epoch_ms' },
      { kind: 'now', column: 'at_s', unit: 'epoch_s' },
      { kind: 'increment', column: 'big', by: 2 },
      { kind: 'increment', column: 'maybe', by: 1 },
    ],
  } as const;
  const locked = { big: '9007199254740993', maybe: null, kept: 'x' };
  expect(['at_dt', 'at_ms', 'at_s', 'big', 'maybe', 'kept'].map((c) => columnAfter(t, c, locked, NOW))).toEqual([
    NOW,
    NOW,
    1_700_000_000,
    '9007199254740995',
    null,
    'x',
  ]);
  expect(() => columnAfter(t, 'unread', locked, NOW)).toThrow(RangeError);
});
