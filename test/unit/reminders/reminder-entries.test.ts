/**
 * Reminders from the entities file to bucket entries: the file's declaration, the fire points a
 * CDC change yields (and skips), their wire format and their shard (docs/reminders.md).
 */
import { entriesFromChange, reminderFireAt, reminderMatches, type ReminderSkip } from '../../../src/core/bucket-entry';
import { decodeBucketEntry, encodeBucketEntry } from '../../../src/core/bucket-entry-codec';
import type { CdcChange, CdcRow } from '../../../src/core/cdc-envelope';
import { entityOf, transitionOf } from '../../../src/core/entity-catalogue';
import { ConfigError } from '../../../src/core/errors';
import { parseEntityFile } from '../../../src/core/entity-file';
import { shardOf, shardOfEntry } from '../../../src/core/router';
import { capturedColumns } from '../../../src/ingest/connector-config';
import { remindingFile, DAY, HOUR, MINUTE } from './reminder-files';

const single = parseEntityFile(remindingFile('single'), 'single.json');
const digested = parseEntityFile(remindingFile('digest'), 'digest.json');

const T = Date.UTC(2031, 0, 10, 10, 50, 0, 0);

function change(after: CdcRow, opts: { before?: CdcRow | null; op?: 'c' | 'u' | 'r'; tsMs: number }): CdcChange {
  return {
    kind: 'change',
    op: opts.op ?? 'c',
    before: opts.before ?? null,
    after,
    source: { db: 'shop', table: 'coupons', tsMs: opts.tsMs, file: 'binlog.000001', pos: 4, gtid: null },
    fieldSchemas: { expire_time: 'io.debezium.time.Timestamp' },
  } as unknown as CdcChange;
}

const row = (over: Partial<Record<string, unknown>> = {}): CdcRow => ({ id: 7, user_id: 42, status: 'ACTIVE', expire_time: T, ...over }) as CdcRow;

describe('the entities file declares reminders', () => {
  test('offsets are parsed, largest first; the event joins the catalogue', () => {
    const t = transitionOf(single, 'coupon', 'expired');
    expect(t.reminders).toMatchObject({
      beforeMs: [3 * DAY, DAY, 30 * MINUTE],
      digest: null,
      event: { kind: 'reminder', type: 'COUPON_EXPIRING_SOON', idField: 'coupon_id' },
    });
    expect(single.events.map((e) => [e.type, e.kind])).toEqual([
      ['COUPON_EXPIRED', 'transition'],
      ['COUPON_EXPIRING_SOON', 'reminder'],
    ]);
  });

  test('a digest names its user column, index, window and event', () => {
    const t = transitionOf(digested, 'coupon', 'expired');
    expect(t.reminders).toMatchObject({
      event: null,
      digest: { userColumn: 'user_id', index: 'idx_coupons_user', windowMs: HOUR, event: { kind: 'digest', idField: 'user_id', itemIdField: 'coupon_id' } },
    });
  });

  test.each([
    [
      'no event and no digest',
      (r: Record<string, unknown>) => void delete r['event'],
      /give event \(one per row and fire point\), digest \(one per user and window\), or both/,
    ],
    ['a bad offset', (r: Record<string, unknown>) => void (r['before'] = ['3 days']), /"3 days" is not a duration/],
    ['a month', (r: Record<string, unknown>) => void (r['before'] = ['P1M']), /months, weeks and years are not fixed lengths/],
    ['the same offset twice', (r: Record<string, unknown>) => void (r['before'] = ['1d', '24h']), /the same fire point twice/],
    ['a zero offset', (r: Record<string, unknown>) => void (r['before'] = ['0s']), /some time before the due time/],
    [
      'a standard field redeclared',
      (r: Record<string, unknown>) => void ((r['event'] as { fields: unknown[] }).fields = [{ name: 'due_at', column: 'user_id' }]),
      /field 'due_at' is declared twice/,
    ],
  ])('refused: %s', (_what, edit, message) => {
    const file = remindingFile('single');
    edit(file.entities[0]!.transitions[0]!.reminders as Record<string, unknown>);
    expect(() => parseEntityFile(file, 'bad.json')).toThrow(ConfigError);
    expect(() => parseEntityFile(file, 'bad.json')).toThrow(message);
  });

  test('a digest of some fire points, events for the others: each entry says which', () => {
    const file = remindingFile('digest');
    const reminders = file.entities[0]!.transitions[0]!.reminders as Record<string, unknown> & { digest: Record<string, unknown> };
    reminders['before'] = ['3d', '1d', '30m'];
    reminders.digest['before'] = ['3d', '1d'];
    reminders['event'] = remindingFile('single').entities[0]!.transitions[0]!.reminders!['event'];
    const both = parseEntityFile(file, 'both.json');
    expect(both.events.map((e) => e.type)).toEqual(['COUPON_EXPIRED', 'COUPON_EXPIRING_SOON', 'USER_COUPONS_EXPIRING_SOON']);
    const entries = entriesFromChange(entityOf(both, 'coupon'), change(row(), { tsMs: T - 5 * DAY })).filter((e) => e.remind !== undefined);
    expect(entries.map((e) => [e.remind!.beforeMs, e.remind!.user ?? null, e.expireAtMs])).toEqual([
      [3 * DAY, '42', Math.floor((T - 3 * DAY) / HOUR) * HOUR],
      [DAY, '42', Math.floor((T - DAY) / HOUR) * HOUR],
      [30 * MINUTE, null, T - 30 * MINUTE],
    ]);
    for (const e of entries) expect(decodeBucketEntry(encodeBucketEntry(e, both), both)).toEqual(e);
    // The fire points the digest leaves out need the event.
    delete reminders['event'];
    expect(() => parseEntityFile(file, 'bad.json')).toThrow(/the fire points the digest does not list need event/);
    reminders.digest['before'] = ['2d'];
    expect(() => parseEntityFile(file, 'bad.json')).toThrow(/"2d" is not one of the fire points/);
  });

  test('refused: a digest window longer than the nearest fire point it digests', () => {
    expect(() => parseEntityFile(remindingFile('digest', { window: '2h', before: ['1d', '1h'] }), 'bad.json')).toThrow(
      /no longer than the nearest fire point it digests/,
    );
  });

  test('refused: a digest over a table set (a user’s rows would be spread over tables)', () => {
    const file = remindingFile('digest');
    file.entities[0]!.table = 'coupon_{0..3}';
    expect(() => parseEntityFile(file, 'bad.json')).toThrow(/a digest needs the entity in one table/);
  });
});

test('the CDC connector captures a digest’s user column (its entries are keyed by it), and nothing more for per-row reminders', () => {
  expect(capturedColumns(entityOf(digested, 'coupon'))).toEqual(['id', 'status', 'expire_time', 'user_id']);
  expect(capturedColumns(entityOf(single, 'coupon'))).toEqual(['id', 'status', 'expire_time']);
});

describe('fire times', () => {
  test('without a digest: the due time minus the offset', () => {
    expect(reminderFireAt(transitionOf(single, 'coupon', 'expired'), T, DAY)).toBe(T - DAY);
  });

  test('with a digest: the start of the window the fire point falls in', () => {
    const t = transitionOf(digested, 'coupon', 'expired');
    expect(reminderFireAt(t, T, DAY)).toBe(Date.UTC(2031, 0, 9, 10, 0, 0, 0));
    expect(reminderFireAt(t, T, 2 * HOUR)).toBe(Date.UTC(2031, 0, 10, 8, 0, 0, 0));
  });
});

describe('entriesFromChange with reminders', () => {
  const coupon = entityOf(single, 'coupon');

  test('a coupon issued long before its due time: the transition entry and one per fire point', () => {
    const entries = entriesFromChange(coupon, change(row(), { tsMs: T - 5 * DAY }));
    expect(entries).toEqual([
      { entity: 'coupon', transition: 'expired', id: '7', expireAtMs: T },
      { entity: 'coupon', transition: 'expired', id: '7', expireAtMs: T - 3 * DAY, remind: { dueAtMs: T, beforeMs: 3 * DAY } },
      { entity: 'coupon', transition: 'expired', id: '7', expireAtMs: T - DAY, remind: { dueAtMs: T, beforeMs: DAY } },
      { entity: 'coupon', transition: 'expired', id: '7', expireAtMs: T - 30 * MINUTE, remind: { dueAtMs: T, beforeMs: 30 * MINUTE } },
    ]);
  });

  test('a coupon issued 2 hours before its due time gets only the 30-minute reminder; the others are counted as past', () => {
    const skipped: ReminderSkip[] = [];
    const entries = entriesFromChange(coupon, change(row(), { tsMs: T - 2 * HOUR }), undefined, (reason) => void skipped.push(reason));
    expect(entries.filter((e) => e.remind !== undefined).map((e) => e.remind!.beforeMs)).toEqual([30 * MINUTE]);
    expect(skipped).toEqual(['past', 'past']);
  });

  test('the commit time decides, not the clock of whoever reads the change: a replay decides the same', () => {
    const once = entriesFromChange(coupon, change(row(), { tsMs: T - 2 * DAY }));
    const again = entriesFromChange(coupon, change(row(), { tsMs: T - 2 * DAY }));
    expect(again).toEqual(once);
    expect(once.filter((e) => e.remind !== undefined)).toHaveLength(2);
  });

  test('a due time that moves yields reminders for the new time', () => {
    const moved = entriesFromChange(coupon, change(row({ expire_time: T + DAY }), { op: 'u', before: row(), tsMs: T - 5 * DAY }));
    expect(moved.map((e) => e.remind?.dueAtMs ?? e.expireAtMs)).toEqual([T + DAY, T + DAY, T + DAY, T + DAY]);
  });

  test('a row that leaves its from-state gets none', () => {
    expect(entriesFromChange(coupon, change(row({ status: 'USED' }), { op: 'u', before: row(), tsMs: T - 5 * DAY }))).toEqual([]);
  });

  test('with a digest every reminder names its user, and its shard is the user’s', () => {
    const entity = entityOf(digested, 'coupon');
    const entries = entriesFromChange(entity, change(row(), { tsMs: T - 5 * DAY })).filter((e) => e.remind !== undefined);
    expect(entries.map((e) => e.remind!.user)).toEqual(['42', '42', '42']);
    for (const e of entries) expect(shardOfEntry(entity, e, 16)).toBe(shardOf('42', 16));
    expect(shardOfEntry(entity, { id: '7' }, 16)).toBe(shardOf('7', 16));
  });

  test('a digest reminder of a row without a usable user is skipped and counted; the transition’s own entry stays', () => {
    const entity = entityOf(digested, 'coupon');
    const skipped: ReminderSkip[] = [];
    const count = (r: ReminderSkip) => void skipped.push(r);
    for (const user of [null, 'alice', 0, -5])
      expect(entriesFromChange(entity, change(row({ user_id: user }), { tsMs: T - 5 * DAY }), undefined, count)).toEqual([
        { entity: 'coupon', transition: 'expired', id: '7', expireAtMs: T },
      ]);
    expect(skipped).toEqual([...Array(3).fill('no_user'), ...Array(9).fill('bad_user')]);
    // Not captured at all: the same (the connector's column list lacks it).
    const uncaptured: Record<string, unknown> = { ...row() };
    delete uncaptured['user_id'];
    expect(entriesFromChange(entity, change(uncaptured as CdcRow, { tsMs: T - 5 * DAY }))).toHaveLength(1);
  });

  test('a coupon handed to another user is scheduled again, so the new user’s digests list it', () => {
    const entity = entityOf(digested, 'coupon');
    const handed = entriesFromChange(entity, change(row({ user_id: 43 }), { op: 'u', before: row(), tsMs: T - 5 * DAY }));
    expect(handed.filter((e) => e.remind !== undefined).map((e) => e.remind!.user)).toEqual(['43', '43', '43']);
    // Without a digest a new user changes nothing.
    expect(entriesFromChange(entityOf(single, 'coupon'), change(row({ user_id: 43 }), { op: 'u', before: row(), tsMs: T - 5 * DAY }))).toEqual([]);
  });

  test('a whole-second commit time (MariaDB’s binlog) stands for its last millisecond: a fire point within that second is skipped, not sent late', () => {
    const coupon = entityOf(single, 'coupon');
    const second = T - 30 * MINUTE - 400;
    const s = Math.floor(second / 1000) * 1000;
    const fired = (tsMs: number) => entriesFromChange(coupon, change(row(), { tsMs })).filter((e) => e.remind?.beforeMs === 30 * MINUTE);
    // The fire point T - 30m lies 400 ms after the second began... unless the second is exact:
    expect(fired(s)).toHaveLength(T - 30 * MINUTE <= s + 999 ? 0 : 1);
    // A millisecond commit time (MySQL 8) is taken as it is.
    expect(fired(T - 30 * MINUTE - 1)).toHaveLength(1);
    expect(fired(T - 30 * MINUTE)).toHaveLength(0);
  });
});

describe('the wire format of a reminder (v4)', () => {
  const coupon = entityOf(digested, 'coupon');
  const [, reminder] = entriesFromChange(coupon, change(row({ id: '18446744073709551615', user_id: '18446744073709551614' }), { tsMs: T - 5 * DAY }));

  test('round-trips exactly, ids past 2^53 included', () => {
    const bytes = encodeBucketEntry(reminder!, digested);
    expect(JSON.parse(bytes.toString())).toMatchObject({ v: 4, user: '18446744073709551614' });
    expect(decodeBucketEntry(bytes, digested)).toEqual(reminder);
  });

  test.each([
    ['a fire time after its fire point', { expireAtMs: T - 3 * DAY + 1 }, /after its fire point/],
    ['a user that is not an id', { user: 'alice' }, /user is not a user id/],
    ['a negative offset', { beforeMs: -1 }, /beforeMs is not a positive integer/],
    ['an unknown key', { extra: 1 }, /unknown keys extra/],
  ])('poison: %s', (_what, over, message) => {
    const wire = { ...JSON.parse(encodeBucketEntry(reminder!, digested).toString()), ...over };
    expect(() => decodeBucketEntry(Buffer.from(JSON.stringify(wire)), digested)).toThrow(message);
  });

  test('written under another file (a fire point, window or digest changed, reminders removed): read, and found not to match, so skipped at fire time rather than dead-lettered', () => {
    const t = transitionOf(digested, 'coupon', 'expired');
    expect(reminderMatches(t, reminder as never)).toBe(true);
    const bytes = encodeBucketEntry(reminder!, digested);
    const plain = parseEntityFile(
      {
        ...remindingFile('digest'),
        entities: remindingFile('digest').entities.map((e) => ({ ...e, transitions: e.transitions.map(({ reminders: _r, ...rest }) => rest) })),
      },
      'plain.json',
    );
    const read = decodeBucketEntry(bytes, plain);
    expect(reminderMatches(transitionOf(plain, 'coupon', 'expired'), read as never)).toBe(false);
    const wider = parseEntityFile(remindingFile('digest', { window: '90m' }), 'wider.json');
    expect(reminderMatches(transitionOf(wider, 'coupon', 'expired'), decodeBucketEntry(bytes, wider) as never)).toBe(false);
    const undigested = decodeBucketEntry(bytes, single);
    expect(reminderMatches(transitionOf(single, 'coupon', 'expired'), undigested as never)).toBe(false);
  });
});
