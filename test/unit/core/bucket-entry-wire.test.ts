/** The bucket entry wire format (core/bucket-entry.ts): v1 for an entity's first transition, v2 for the others. */
import fc from 'fast-check';
import { BucketEntry } from '../../../src/core/bucket-entry';
import { decodeBucketEntry, encodeBucketEntry } from '../../../src/core/bucket-entry-codec';
import { parseEntityFile } from '../../../src/core/entity-file';
import { CdcInvalidError } from '../../../src/core/errors';
import { loadEntities } from '../../../src/ops/load-entities';

const T = Date.UTC(2031, 0, 2, 3, 4, 5, 678);
const defaults = loadEntities('entities/default.json');

// The default file plus an entity with two transitions: `expired` (first: v1) and `lock_timeout` (v2).
const event = (type: string) => ({
  type,
  ceType: `shop.${type.toLowerCase()}`,
  avroName: `shop.events.E${type}`,
  idField: 'row_id',
  summary: `${type} happened.`,
});
const voucher = {
  ...{ name: 'voucher', table: 'vouchers', id: 'id' },
  status: { column: 'state', type: 'string', values: ['待使用', '已锁定', '已过期'] },
  transitions: [
    {
      name: 'expired',
      from: ['待使用', '已锁定'],
      to: '已过期',
      due: { column: 'expire_time', kind: 'datetime' },
      index: 'idx_e',
      event: event('VOUCHER_EXPIRED'),
    },
    {
      name: 'lock_timeout',
      from: ['已锁定'],
      to: '待使用',
      due: { column: 'lock_expire_time', kind: 'epoch_ms' },
      index: 'idx_l',
      event: event('VOUCHER_LOCK_TIMED_OUT'),
    },
  ],
};
const twoTransitions = parseEntityFile({ entities: [voucher] }, 'inline test entities');
/** The same entity before its lock timeout was added: what an older process reads with. */
const older = parseEntityFile({ entities: [{ ...voucher, transitions: voucher.transitions.slice(0, 1) }] }, 'older inline test entities');

describe('bucket entry wire format, default file', () => {
  const sample: BucketEntry = { entity: 'coupon', transition: 'expired', id: '1001', expireAtMs: T };
  const decodeJson = (text: string) => decodeBucketEntry(Buffer.from(text), defaults);

  test('encodes compact JSON, v1: the bytes of every entry written before transitions were named', () => {
    expect(encodeBucketEntry(sample, defaults).toString('utf8')).toBe(`{"v":1,"entity":"coupon","id":"1001","expireAtMs":${T}}`);
    expect(encodeBucketEntry({ ...sample, entity: 'order', transition: 'cancelled' }, defaults).toString('utf8')).toBe(
      `{"v":1,"entity":"order","id":"1001","expireAtMs":${T}}`,
    );
  });

  test("v1 decodes to the entity's first transition", () => {
    expect(decodeJson(`{"v":1,"entity":"order","id":"2002","expireAtMs":${T}}`)).toEqual({
      entity: 'order',
      transition: 'cancelled',
      id: '2002',
      expireAtMs: T,
    });
  });

  test('round-trips every valid entry', () => {
    const entries = fc.record({
      entity: fc.constantFrom('coupon', 'order'),
      id: fc.bigInt({ min: 1n, max: 18446744073709551615n }).map(String),
      expireAtMs: fc.integer({ min: 0, max: 8.64e15 }),
    });
    fc.assert(
      fc.property(entries, (e) => {
        const entry = { ...e, transition: e.entity === 'coupon' ? 'expired' : 'cancelled' };
        expect(decodeBucketEntry(encodeBucketEntry(entry, defaults), defaults)).toEqual(entry);
      }),
    );
  });

  test.each([
    ['null', null, /value is null/],
    ['not JSON', Buffer.from('{"v":1,'), /not JSON/],
    ['JSON null', Buffer.from('null'), /not an object/],
    ['an array', Buffer.from('[1]'), /not an object/],
  ])('rejects %s', (_name, buf, reason) => {
    expect(() => decodeBucketEntry(buf, defaults)).toThrow(CdcInvalidError);
    expect(() => decodeBucketEntry(buf, defaults)).toThrow(reason);
  });

  const v1 = { v: 1, entity: 'coupon', id: '1001', expireAtMs: T };
  test.each([
    ['an unknown v', { ...v1, v: 5 }, /unsupported v 5/],
    ['a v4 reminder firing after its fire point', { ...v1, v: 4, transition: 'expired', dueAtMs: T + 1, beforeMs: 2 }, /after its fire point/],
    ['v as a string', { ...v1, v: '1' }, /unsupported v "1"/],
    ['missing v', { entity: 'coupon', id: '1001', expireAtMs: T }, /unsupported v undefined/],
    ['negative expireAtMs', { ...v1, expireAtMs: -1 }, /expireAtMs/],
    ['fractional expireAtMs', { ...v1, expireAtMs: 1.5 }, /expireAtMs/],
    ['expireAtMs as a string', { ...v1, expireAtMs: String(T) }, /expireAtMs/],
    ['a non-decimal id', { ...v1, id: 'abc' }, /id is not a decimal id/],
    ['a numeric id', { ...v1, id: 1001 }, /id is not a decimal id/],
    ['a negative id', { ...v1, id: '-1' }, /id is not a decimal id/],
    ['a zero-padded id', { ...v1, id: '01001' }, /id is not a decimal id/],
    ['an empty id', { ...v1, id: '' }, /id is not a decimal id/],
    ['an unknown entity', { ...v1, entity: 'user' }, /unknown entity "user"/],
    ['an entity of another file', { ...v1, entity: 'voucher' }, /unknown entity "voucher"/],
    ['an inherited name as entity', { ...v1, entity: 'constructor' }, /unknown entity "constructor"/],
    ['an unknown key', { ...v1, shard: 3 }, /unknown keys shard/],
    ['a v1 entry naming a transition (a new field means a new v)', { ...v1, transition: 'expired' }, /unknown keys transition/],
    ['a v2 entry without a transition', { ...v1, v: 2 }, /unknown transition undefined of coupon/],
    ['a v2 entry with an unknown transition', { ...v1, v: 2, transition: 'cancelled' }, /unknown transition "cancelled" of coupon/],
    ['a v2 entry with an unknown key', { ...v1, v: 2, transition: 'expired', tier: 'minute' }, /unknown keys tier/],
  ])('rejects %s', (_name, value, reason) => {
    const run = () => decodeJson(JSON.stringify(value));
    expect(run).toThrow(CdcInvalidError);
    expect(run).toThrow(reason);
    expect(run).toThrow(/^bucket entry: /);
  });

  test('a v2 entry naming the first transition means what its v1 form means', () => {
    expect(decodeJson(JSON.stringify({ ...v1, v: 2, transition: 'expired' }))).toEqual(sample);
  });

  test('refuses to encode what it would refuse to decode', () => {
    expect(() => encodeBucketEntry({ ...sample, expireAtMs: -1 }, defaults)).toThrow(/^bucket entry: /);
    expect(() => encodeBucketEntry({ ...sample, id: '1e3' }, defaults)).toThrow(/^bucket entry: /);
    expect(() => encodeBucketEntry({ ...sample, transition: 'cancelled' }, defaults)).toThrow(/^bucket entry: unknown transition "cancelled" of coupon$/);
    expect(() => encodeBucketEntry({ ...sample, entity: 'voucher' }, defaults)).toThrow(/^bucket entry: unknown entity "voucher"$/);
  });

  test('decode errors are DLQ data: code CDC_INVALID, not retriable', () => {
    expect(() => decodeJson('{}')).toThrow(expect.objectContaining({ code: 'CDC_INVALID', retriable: false }));
  });
});

describe('bucket entry wire format, an entity with two transitions', () => {
  const expired: BucketEntry = { entity: 'voucher', transition: 'expired', id: '7', expireAtMs: T };
  const lockTimeout: BucketEntry = { ...expired, transition: 'lock_timeout' };

  test('the first transition is v1, the second v2 with its name', () => {
    expect(encodeBucketEntry(expired, twoTransitions).toString('utf8')).toBe(`{"v":1,"entity":"voucher","id":"7","expireAtMs":${T}}`);
    expect(encodeBucketEntry(lockTimeout, twoTransitions).toString('utf8')).toBe(
      `{"v":2,"entity":"voucher","transition":"lock_timeout","id":"7","expireAtMs":${T}}`,
    );
  });

  test.each([
    ['v1', expired],
    ['v2', lockTimeout],
  ])('%s round-trips', (_v, entry) => {
    const decoded = decodeBucketEntry(encodeBucketEntry(entry, twoTransitions), twoTransitions);
    expect(decoded).toEqual(entry);
    expect(Object.isFrozen(decoded)).toBe(true);
  });

  test('a v2 entry is refused by a catalogue without its transition (an older or another file): DLQ, not a guess', () => {
    const buf = encodeBucketEntry(lockTimeout, twoTransitions);
    expect(() => decodeBucketEntry(buf, older)).toThrow(CdcInvalidError);
    expect(() => decodeBucketEntry(buf, older)).toThrow('bucket entry: unknown transition "lock_timeout" of voucher');
    expect(decodeBucketEntry(encodeBucketEntry(expired, twoTransitions), older)).toEqual(expired);
  });
});
