import { stringify as losslessStringify } from 'lossless-json';
import { BucketEntry, entriesFromChange } from '../../../src/core/bucket-entry';
import { CdcChange, decodeCdcValue } from '../../../src/core/cdc-envelope';
import { entityOf } from '../../../src/core/entity-catalogue';
import { CdcInvalidError } from '../../../src/core/errors';
import { loadEntities } from '../../../src/ops/load-entities';

// Today's coupons and orders, as the entities file describes them.
const catalogue = loadEntities('entities/default.json');
const COUPON = entityOf(catalogue, 'coupon');
const ORDER = entityOf(catalogue, 'order');

const T = Date.UTC(2031, 0, 2, 3, 4, 5, 678);
/** The shipped file reminds of coupons too; these tests are about the transition's entries (reminders: test/unit/reminders/). */
const transitionEntries = (entries: BucketEntry[]) => entries.filter((e) => e.remind === undefined);
const LATER = T + 3_600_000;

// ---- Debezium fixtures: what the MariaDB connector emits for the migration's coupons table ----
// Plain columns have only a Connect type; logical types add `name` (and `version`).

const col = (type: string, optional: boolean, field: string, extra: object = {}) => ({ type, optional, ...extra, field });
const timestamp = (field: string, optional: boolean, extra: object = {}) =>
  col('int64', optional, field, { name: 'io.debezium.time.Timestamp', version: 1, ...extra });

/** BIGINT UNSIGNED → int64 (bigint.unsigned.handling.mode=long), INT UNSIGNED → int64, DATETIME(3) → Timestamp. */
type ColumnOverrides = { id?: object; expireTime?: object };
const couponValueSchema = (over: ColumnOverrides) => ({
  type: 'struct',
  fields: [
    over.id ?? col('int64', false, 'id'),
    col('int64', false, 'user_id'),
    col('string', false, 'status', { default: 'INIT' }),
    over.expireTime ?? timestamp('expire_time', false),
    col('int64', true, 'locked_order_id'),
    timestamp('expired_at', true),
    col('int64', false, 'version', { default: 0 }),
    timestamp('created_at', false, { default: 0 }),
    timestamp('updated_at', false, { default: 0 }),
  ],
  optional: true,
  name: 'tb.timebucket.coupons.Value',
});

const snapshotEnum = {
  name: 'io.debezium.data.Enum',
  version: 1,
  parameters: { allowed: 'true,first,first_in_data_collection,last_in_data_collection,last,false,incremental' },
  default: 'false',
};
const sourceSchema = {
  type: 'struct',
  fields: [
    ...['version', 'connector', 'name'].map((f) => col('string', false, f)),
    col('int64', false, 'ts_ms'),
    col('string', true, 'snapshot', snapshotEnum),
    col('string', false, 'db'),
    col('string', true, 'sequence'),
    col('int64', true, 'ts_us'),
    col('int64', true, 'ts_ns'),
    col('string', true, 'table'),
    col('int64', false, 'server_id'),
    col('string', true, 'gtid'),
    col('string', false, 'file'),
    col('int64', false, 'pos'),
    col('int32', false, 'row'),
    col('int64', true, 'thread'),
    col('string', true, 'query'),
  ],
  optional: false,
  name: 'io.debezium.connector.mariadb.Source',
  version: 1,
  field: 'source',
};
const transactionSchema = {
  type: 'struct',
  fields: [col('string', false, 'id'), col('int64', false, 'total_order'), col('int64', false, 'data_collection_order')],
  optional: true,
  name: 'event.block',
  version: 1,
  field: 'transaction',
};

const couponEnvelopeSchema = (over: ColumnOverrides = {}) => ({
  type: 'struct',
  fields: [
    { ...couponValueSchema(over), field: 'before' },
    { ...couponValueSchema(over), field: 'after' },
    sourceSchema,
    transactionSchema,
    col('string', false, 'op'),
    ...['ts_ms', 'ts_us', 'ts_ns'].map((f) => col('int64', true, f)),
  ],
  optional: false,
  name: 'tb.timebucket.coupons.Envelope',
  version: 2,
});

type Row = Record<string, unknown>;
const DAY = 86_400_000;
const coupon = (over: Row = {}): Row => ({
  ...{ id: 1001, user_id: 42, status: 'ACTIVE', expire_time: T, locked_order_id: null, expired_at: null, version: 0 },
  ...{ created_at: T - DAY, updated_at: T - DAY, ...over },
});
const order = (over: Row = {}): Row => ({ id: 2002, user_id: 42, status: 'UNPAID', coupon_id: null, expire_time: T, version: 0, ...over });

function payload(table: string, op: string, before: Row | null, after: Row | null) {
  const source = {
    ...{ version: '3.0.8.Final', connector: 'mariadb', name: 'tb', ts_ms: T, snapshot: op === 'r' ? 'true' : 'false' },
    ...{ db: 'timebucket', sequence: null, ts_us: T * 1000, ts_ns: T * 1_000_000, table, server_id: 1, gtid: '0-1-42' },
    ...{ file: 'mysql-bin.000003', pos: 4711, row: 0, thread: 11, query: null },
  };
  return { before, after, source, transaction: null, op, ts_ms: T + 5, ts_us: (T + 5) * 1000, ts_ns: (T + 5) * 1_000_000 };
}

/**
 * Goes through decodeCdcValue so the tests see exactly what the ingest stage will see. A bigint
 * in a fixture is written as a bare JSON number, as Debezium writes a BIGINT.
 */
function change(value: unknown): CdcChange {
  const event = decodeCdcValue(losslessStringify(value)!);
  if (event.kind !== 'change') throw new Error('fixture decoded to a tombstone');
  return event;
}

const envelopes = {
  unwrapped: (op: string, before: Row | null, after: Row | null) => change(payload('coupons', op, before, after)),
  wrapped: (op: string, before: Row | null, after: Row | null) => change({ schema: couponEnvelopeSchema(), payload: payload('coupons', op, before, after) }),
};
const orderChange = (op: string, before: Row | null, after: Row | null) => change(payload('orders', op, before, after));

describe.each(Object.entries(envelopes))('entriesFromChange, coupons, %s envelope', (_name, couponChange) => {
  const entry = (expireAtMs: number, id = '1001'): BucketEntry => ({ entity: 'coupon', transition: 'expired', id, expireAtMs });

  test('insert ACTIVE → entry', () => {
    expect(entriesFromChange(COUPON, couponChange('c', null, coupon()))).toEqual([entry(T)]);
  });

  test('snapshot read of an ACTIVE row → entry (rows that existed before the connector)', () => {
    expect(entriesFromChange(COUPON, couponChange('r', null, coupon()))).toEqual([entry(T)]);
  });

  test('insert INIT → no entry', () => {
    expect(entriesFromChange(COUPON, couponChange('c', null, coupon({ status: 'INIT' })))).toEqual([]);
  });

  test('INIT → ACTIVE → entry', () => {
    expect(entriesFromChange(COUPON, couponChange('u', coupon({ status: 'INIT' }), coupon()))).toEqual([entry(T)]);
  });

  test('LOCKED → ACTIVE (its order was cancelled) → entry, so the released coupon is scheduled again', () => {
    const before = coupon({ status: 'LOCKED', locked_order_id: 2002 });
    expect(entriesFromChange(COUPON, couponChange('u', before, coupon({ version: 2 })))).toEqual([entry(T)]);
  });

  test('ACTIVE → ACTIVE with only other columns changed → no entry (its entry already exists)', () => {
    const after = coupon({ version: 1, updated_at: T - 1000 });
    expect(entriesFromChange(COUPON, couponChange('u', coupon(), after))).toEqual([]);
  });

  test('ACTIVE → ACTIVE handed to another user → scheduled again (its digests go by user)', () => {
    const after = coupon({ user_id: 43, version: 1 });
    expect(transitionEntries(entriesFromChange(COUPON, couponChange('u', coupon(), after)))).toEqual([entry(T)]);
  });

  test.each([
    ['pushed later', LATER],
    ['pulled earlier', T - 60_000],
  ])('ACTIVE with expire_time %s → entry with the NEW time', (_how, newTime) => {
    const after = coupon({ expire_time: newTime, version: 1 });
    expect(transitionEntries(entriesFromChange(COUPON, couponChange('u', coupon(), after)))).toEqual([entry(newTime)]);
  });

  test.each(['LOCKED', 'USED', 'EXPIRED', 'INVALID'])('ACTIVE → %s → no entry', (status) => {
    expect(entriesFromChange(COUPON, couponChange('u', coupon(), coupon({ status })))).toEqual([]);
  });

  test('LOCKED → USED → no entry', () => {
    expect(entriesFromChange(COUPON, couponChange('u', coupon({ status: 'LOCKED' }), coupon({ status: 'USED' })))).toEqual([]);
  });

  test('update without a before image → entry (cannot prove it was already scheduled)', () => {
    expect(entriesFromChange(COUPON, couponChange('u', null, coupon()))).toEqual([entry(T)]);
  });

  test.each([
    ['only the key (binlog_row_image=MINIMAL)', { id: 1001 }],
    ['a garbage status', coupon({ status: 7 })],
    ['an undecodable expire_time', coupon({ expire_time: 'soon' })],
  ])('update whose before image has %s → entry, not an error', (_what, before) => {
    expect(entriesFromChange(COUPON, couponChange('u', before, coupon()))).toEqual([entry(T)]);
  });

  test('delete → no entry', () => {
    expect(entriesFromChange(COUPON, couponChange('d', coupon(), null))).toEqual([]);
  });

  test('a decimal-string id larger than 2^53 is kept exact', () => {
    const big = '18446744073709551615';
    expect(entriesFromChange(COUPON, couponChange('c', null, coupon({ id: big })))).toEqual([entry(T, big)]);
  });

  // Snowflake-style ids: Debezium writes a BIGINT as a JSON number, which JSON.parse would round.
  test.each(['9007199254740993', '9223372036854775807', '18446744073709551615'])('an id of %s written as a JSON number is kept exact', (big) => {
    const event = couponChange('c', null, coupon({ id: BigInt(big), user_id: BigInt(big) }));
    expect(entriesFromChange(COUPON, event)).toEqual([entry(T, big)]);
  });

  test.each([
    ['beyond BIGINT UNSIGNED', 18446744073709551616n],
    // What Debezium's long mode makes of an unsigned id above 2^63-1: it wraps to a negative.
    ['negative', -9223372036854775808n],
  ])('an id written as a JSON number, %s, is rejected', (_what, id) => {
    const run = () => entriesFromChange(COUPON, couponChange('c', null, coupon({ id })));
    expect(run).toThrow(CdcInvalidError);
    expect(run).toThrow(`after.id: expected a positive integer within BIGINT UNSIGNED (exact) or its decimal string, got ${id}`);
  });

  test.each([
    ['id', { id: 0 }, /after\.id/],
    ['id', { id: -5 }, /after\.id/],
    ['id', { id: 1.5 }, /after\.id/],
    ['id', { id: '01' }, /after\.id/],
    ['id', { id: 'abc' }, /after\.id/],
    ['id', { id: '18446744073709551616' }, /after\.id/],
    ['id', { id: null }, /after\.id/],
    ['expire_time', { expire_time: undefined }, /after\.expire_time: missing/],
    // Unwrapped: an ISO string without offset; wrapped: the schema says Timestamp, so not a string.
    ['expire_time', { expire_time: '2031-01-02T03:04:05' }, /after\.expire_time: .*(offset|must be a number)/],
    ['expire_time', { expire_time: -1 }, /after\.expire_time: before 1970/],
    ['status', { status: 42 }, /after\.status: expected a string/],
    ['status', { status: null }, /after\.status: expected a string/],
    ['status', { status: 'ACTIVATED' }, /after\.status: unknown coupon state "ACTIVATED"/],
    ['status', { status: 'UNPAID' }, /after\.status: unknown coupon state/],
  ])('bad %s %j → CdcInvalidError naming the field', (_field, over, reason) => {
    const run = () => entriesFromChange(COUPON, couponChange('c', null, coupon(over)));
    expect(run).toThrow(CdcInvalidError);
    expect(run).toThrow(reason);
  });

  test('a NULL expire_time → no entry: no deadline, nothing can become due (the table forbids it, but a file may not)', () => {
    expect(entriesFromChange(COUPON, couponChange('c', null, coupon({ expire_time: null })))).toEqual([]);
  });

  test('NULL → a time while ACTIVE → entry: setting the deadline schedules it', () => {
    expect(entriesFromChange(COUPON, couponChange('u', coupon({ expire_time: null }), coupon()))).toEqual([entry(T)]);
  });

  test('a garbage status is rejected even when the change would not be scheduled', () => {
    expect(() => entriesFromChange(COUPON, couponChange('u', coupon(), coupon({ status: 'used' })))).toThrow(/after\.status/);
  });
});

test('a JS number beyond 2^53 handed in directly is rejected: it may already be rounded', () => {
  const direct: CdcChange = { kind: 'change', op: 'c', before: null, after: coupon({ id: 2 ** 53 }), source: {}, fieldSchemas: {} };
  expect(() => entriesFromChange(COUPON, direct)).toThrow(/after\.id: .* got 9007199254740992$/);
});

describe('entriesFromChange, schema-driven decoding', () => {
  test('the wrapper carries the encoding: MicroTimestamp µs are read as µs, not ms', () => {
    const micro = { type: 'int64', optional: false, name: 'io.debezium.time.MicroTimestamp', version: 1, field: 'expire_time' };
    const value = { schema: couponEnvelopeSchema({ expireTime: micro }), payload: payload('coupons', 'c', null, coupon({ expire_time: T * 1000 + 456 })) };
    expect(entriesFromChange(COUPON, change(value))).toEqual([{ entity: 'coupon', transition: 'expired', id: '1001', expireAtMs: T }]);
  });

  test('ZonedTimestamp strings are decoded with their offset', () => {
    const zoned = { type: 'string', optional: false, name: 'io.debezium.time.ZonedTimestamp', version: 1, field: 'expire_time' };
    const row = coupon({ expire_time: '2031-01-02T05:04:05.678+02:00' });
    const value = { schema: couponEnvelopeSchema({ expireTime: zoned }), payload: payload('coupons', 'c', null, row) };
    expect(entriesFromChange(COUPON, change(value))).toMatchObject([{ expireAtMs: T }]);
  });

  test('an id with a Connect logical type (Decimal as base64 bytes) is rejected, not misread', () => {
    const decimal = { name: 'org.apache.kafka.connect.data.Decimal', version: 1, parameters: { scale: '0', 'connect.decimal.precision': '20' } };
    const schema = couponEnvelopeSchema({ id: col('bytes', false, 'id', decimal) });
    // A digits-only string such as "1234" is valid base64 too: it must not pass for id 1234.
    const value = { schema, payload: payload('coupons', 'c', null, coupon({ id: '1234' })) };
    expect(() => entriesFromChange(COUPON, change(value))).toThrow(/after\.id: unsupported Connect schema/);
  });
});

describe('entriesFromChange, orders', () => {
  const entry = (expireAtMs: number): BucketEntry => ({ entity: 'order', transition: 'cancelled', id: '2002', expireAtMs });

  test('insert UNPAID → entry', () => {
    expect(entriesFromChange(ORDER, orderChange('c', null, order()))).toEqual([entry(T)]);
  });

  test('UNPAID with expire_time changed → entry with the new time', () => {
    expect(entriesFromChange(ORDER, orderChange('u', order(), order({ expire_time: LATER })))).toEqual([entry(LATER)]);
  });

  test.each(['PAID', 'CANCELLED'])('UNPAID → %s → no entry', (status) => {
    expect(entriesFromChange(ORDER, orderChange('u', order(), order({ status })))).toEqual([]);
  });

  test('a coupon state on an order is garbage', () => {
    expect(() => entriesFromChange(ORDER, orderChange('c', null, order({ status: 'ACTIVE' })))).toThrow(/after\.status: unknown order state/);
  });
});

describe("the default file is today's rule", () => {
  test('one transition per entity, from ACTIVE and from UNPAID; LOCKED coupons are left to their order', () => {
    expect(catalogue.transitions.map((t) => [t.ref, t.from])).toEqual([
      ['coupon.expired', ['ACTIVE']],
      ['order.cancelled', ['UNPAID']],
    ]);
  });
});
