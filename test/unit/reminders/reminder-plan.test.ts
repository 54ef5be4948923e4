/**
 * What a reminder batch decides at its fire time (core/reminder-plan.ts), the events it writes
 * (core/events.ts) and their derived Avro records, encoded with exact longs.
 */
import { Type } from 'avsc';
import { entityOf, transitionOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { digestEvents, reminderEvent } from '../../../src/core/events';
import type { ReadRow } from '../../../src/core/expiry-plan';
import { planDigests, planReminders, type ReminderEntry } from '../../../src/core/reminder-plan';
import { deriveEventSchema, type DerivableColumn } from '../../../src/publish/derived-schema';
import { exactLongHook } from '../../../src/publish/exact-long';
import { DAY, HOUR, remindingFile } from './reminder-files';

const single = parseEntityFile(remindingFile('single'), 'single.json');
const digested = parseEntityFile(remindingFile('digest'), 'digest.json');
const T = Date.UTC(2031, 0, 10, 10, 50, 0, 0);

const entry = (id: string, over: Partial<{ dueAtMs: number; beforeMs: number; fireAt: number; user: string }> = {}): ReminderEntry => {
  const dueAtMs = over.dueAtMs ?? T;
  const beforeMs = over.beforeMs ?? DAY;
  return {
    id,
    expireAtMs: over.fireAt ?? dueAtMs - beforeMs,
    remind: over.user === undefined ? { dueAtMs, beforeMs } : { dueAtMs, beforeMs, user: over.user },
  };
};
const row = (id: string, dueAtMs = T): ReadRow => ({ id, status: 'ACTIVE', expireAtMs: dueAtMs, columns: { user_id: '42', version: 1 } });

describe('planReminders: sent only for a row still in a from-state, at the same due time, not yet due', () => {
  const now = T - DAY + 5;

  test('sent, moved, gone, due passed, not yet at its fire time', () => {
    const plan = planReminders(
      [entry('1'), entry('2'), entry('3'), entry('4', { dueAtMs: now, beforeMs: DAY }), entry('5', { beforeMs: HOUR })],
      [row('1'), row('2', T + DAY), row('4', now)],
      now,
    );
    expect(plan.send.map((s) => s.entry.id)).toEqual(['1']);
    expect(plan.skipped.map((s) => [s.entry.id, s.reason])).toEqual([
      ['2', 'moved'],
      ['3', 'not_expirable'],
      ['4', 'due_passed'],
    ]);
    expect(plan.notYetDue).toEqual([{ entry: entry('5', { beforeMs: HOUR }), retryInMs: T - HOUR - now }]);
  });

  test("a fire point read after the row's next one has passed is superseded: a row's reminders are sent in fire-point order", () => {
    const points = [DAY, HOUR, 60_000];
    const day = entry('1');
    const hour = entry('1', { beforeMs: HOUR });
    // Just before the next fire point: still sent.
    expect(planReminders([day], [row('1')], T - HOUR - 1, points).send).toHaveLength(1);
    // At it, and after: the day's reminder is skipped, the hour's sent.
    const at = planReminders([day, hour], [row('1')], T - HOUR, points);
    expect(at.skipped.map((s) => [s.entry.remind.beforeMs, s.reason])).toEqual([[DAY, 'superseded']]);
    expect(at.send.map((s) => s.entry.remind.beforeMs)).toEqual([HOUR]);
    // The last fire point is superseded only by the due time (due_passed).
    expect(planReminders([entry('1', { beforeMs: 60_000 })], [row('1')], T - 1, points).send).toHaveLength(1);
    // Without the fire points given, nothing is superseded.
    expect(planReminders([day], [row('1')], T - 1).send).toHaveLength(1);
  });

  test('the same reminder twice in one batch is one event', () => {
    expect(planReminders([entry('1'), entry('1')], [row('1')], now).send).toHaveLength(1);
  });
});

describe('planDigests: one read per fire point and window, of its users', () => {
  test('groups by fire point and window; users once each', () => {
    const w = Date.UTC(2031, 0, 9, 10, 0, 0, 0);
    const plan = planDigests(
      [
        entry('1', { user: '42', fireAt: w }),
        entry('2', { user: '42', fireAt: w }),
        entry('3', { user: '7', fireAt: w }),
        entry('4', { user: '42', fireAt: w, beforeMs: 3 * DAY }),
      ],
      w + 10,
    );
    expect(plan.groups.map((g) => [g.beforeMs, g.windowStartMs, g.users])).toEqual([
      [DAY, w, ['42', '7']],
      [3 * DAY, w, ['42']],
    ]);
    expect(plan.notYetDue).toEqual([]);
  });

  test('a window not yet started by the database clock waits', () => {
    const w = T - DAY;
    expect(planDigests([entry('1', { user: '42', fireAt: w })], w - 30).notYetDue).toEqual([{ entry: entry('1', { user: '42', fireAt: w }), retryInMs: 30 }]);
  });
});

const columns = new Map<string, DerivableColumn>([
  ['id', { dataType: 'bigint', columnType: 'bigint unsigned', nullable: false }],
  ['user_id', { dataType: 'bigint', columnType: 'bigint unsigned', nullable: false }],
  ['status', { dataType: 'varchar', columnType: 'varchar(16)', nullable: false }],
  ['expire_time', { dataType: 'datetime', columnType: 'datetime(3)', nullable: false }],
  ['version', { dataType: 'int', columnType: 'int unsigned', nullable: false }],
]);

describe('COUPON_EXPIRING_SOON', () => {
  const t = transitionOf(single, 'coupon', 'expired');
  const spec = t.reminders!.event!;
  const payload = reminderEvent(
    t,
    spec,
    { ...row('18446744073709551615'), columns: { user_id: '9223372036854775807' } },
    { occurredAtMs: T - DAY + 3, path: 'stream', beforeMs: DAY },
  );

  test('carries the key once per row, due time and fire point', () => {
    expect(payload).toEqual({
      event_key: `coupon-expired-remind-18446744073709551615-${T}-${DAY}`,
      event_type: 'COUPON_EXPIRING_SOON',
      coupon_id: '18446744073709551615',
      status: 'ACTIVE',
      due_at: T,
      remind_before_ms: DAY,
      occurred_at: T - DAY + 3,
      path: 'stream',
      user_id: '9223372036854775807',
    });
  });

  test('its derived record encodes it with exact longs', () => {
    const schema = deriveEventSchema(spec, entityOf(single, 'coupon'), columns);
    expect(schema.fields.map((f) => f.name)).toEqual([
      'event_key',
      'event_type',
      'coupon_id',
      'status',
      'due_at',
      'remind_before_ms',
      'occurred_at',
      'path',
      'user_id',
    ]);
    const type = Type.forSchema(schema as never, { typeHook: exactLongHook });
    const ok = { ...payload, coupon_id: '9223372036854775807' };
    expect(type.fromBuffer(type.toBuffer(ok))).toMatchObject({ coupon_id: 9223372036854775807n, user_id: 9223372036854775807n });
  });
});

describe('USER_COUPONS_EXPIRING_SOON', () => {
  const t = transitionOf(digested, 'coupon', 'expired');
  const spec = t.reminders!.digest!.event;
  const w = Date.UTC(2031, 0, 9, 10, 0, 0, 0);
  const facts = { occurredAtMs: w + 4, path: 'stream', beforeMs: DAY, user: '42', windowStartMs: w } as const;
  const payload: Record<string, unknown> = digestEvents(t, spec, [row('30', T + 60_000), row('9'), row('10')], facts)[0]!;

  test('one per user, fire point and window, its coupons by due time then id', () => {
    expect(payload).toMatchObject({
      event_key: `coupon-expired-digest-42-${DAY}-${w}-1`,
      event_type: 'USER_COUPONS_EXPIRING_SOON',
      user_id: '42',
      remind_before_ms: DAY,
      window_start: w,
      part: 1,
      parts: 1,
    });
    expect(payload['items']).toEqual([
      { coupon_id: '9', due_at: T, version: 1 },
      { coupon_id: '10', due_at: T, version: 1 },
      { coupon_id: '30', due_at: T + 60_000, version: 1 },
    ]);
  });

  test('a user with more rows than a part holds gets parts: each its share in order, its number in its key and payload', () => {
    const rows = Array.from({ length: 7 }, (_, i) => row(String(100 + i), T + i));
    const parts: Array<Record<string, unknown>> = digestEvents(t, spec, rows, facts, 3);
    expect(parts.map((p) => [p['event_key'], p['part'], p['parts']])).toEqual([1, 2, 3].map((n) => [`coupon-expired-digest-42-${DAY}-${w}-${n}`, n, 3]));
    expect(parts.map((p) => (p['items'] as Array<{ coupon_id: string }>).map((i) => i.coupon_id))).toEqual([
      ['100', '101', '102'],
      ['103', '104', '105'],
      ['106'],
    ]);
  });

  test('its derived record has the items as an array of records, and encodes the payload', () => {
    const schema = deriveEventSchema(spec, entityOf(digested, 'coupon'), columns);
    expect(schema.fields.map((f) => f.name)).toEqual([
      'event_key',
      'event_type',
      'user_id',
      'remind_before_ms',
      'window_start',
      'occurred_at',
      'path',
      'items',
      'part',
      'parts',
    ]);
    const type = Type.forSchema(schema as never, { typeHook: exactLongHook });
    const decoded = type.fromBuffer(type.toBuffer(payload)) as { items: Array<{ coupon_id: bigint }> };
    expect(decoded.items.map((i) => i.coupon_id)).toEqual([9n, 10n, 30n]);
  });
});
