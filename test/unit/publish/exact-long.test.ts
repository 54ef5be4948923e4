/**
 * Avro longs exact over 64 bits: the standard wire format, ids beyond 2^53 written and read
 * exactly, and what cannot be exact refused. The event schemas are parsed the way the registry
 * client parses them (csr's schemaFromConfluentSchema with our options).
 */
import { Type } from 'avsc';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { schemaFromConfluentSchema } from '@kafkajs/confluent-schema-registry/dist/schemaTypeResolver';
import { exactLong } from '../../../src/publish/exact-long';
import { eventAvroOptions } from '../../../src/publish/schema-registry';
import { loadEventSchema } from '../../../src/publish/schemas';
import { couponExpired, orderCancelled } from './default-catalogue';

const avscLong = Type.forSchema('long');

describe('exactLong', () => {
  // avsc's own long stops at ±2^52.
  test.each([0, 1, -1, 42, 2 ** 31, 2 ** 52, -(2 ** 52)])('writes the same bytes as avsc’s own long for %d', (n) => {
    expect(exactLong.toBuffer(n)).toEqual(avscLong.toBuffer(n));
    expect(exactLong.fromBuffer(avscLong.toBuffer(n))).toBe(BigInt(n));
  });

  test.each([
    ['2^53 - 1', '9007199254740991'],
    ['2^53 + 1', '9007199254740993'],
    ['2^63 - 1', '9223372036854775807'],
    ['-2^63', '-9223372036854775808'],
  ])('round-trips %s exactly from a decimal string or a bigint', (_what, text) => {
    expect(exactLong.toBuffer(text)).toEqual(exactLong.toBuffer(BigInt(text)));
    expect(exactLong.fromBuffer(exactLong.toBuffer(text))).toBe(BigInt(text));
  });

  test('2^63 - 1 is the zig-zag varint every Avro reader expects', () => {
    // zig-zag(2^63 - 1) = 2^64 - 2: nine 0xff-ish groups of 7 bits, then 0x01.
    expect(exactLong.toBuffer('9223372036854775807').toString('hex')).toBe('feffffffffffffffff01');
  });

  test.each([
    ['a number beyond 2^53 (maybe rounded)', 2 ** 53],
    ['a fraction', 1.5],
    ['above 2^63 - 1 (an Avro long is signed)', '9223372036854775808'],
    ['below -2^63', -(2n ** 63n) - 1n],
    ['a non-canonical string', '042'],
    ['a word', 'nine'],
    ['null', null],
  ])('refuses %s', (_what, value) => {
    expect(exactLong.isValid(value)).toBe(false);
    expect(() => exactLong.toBuffer(value)).toThrow();
  });
});

const parse = (text: string) => schemaFromConfluentSchema({ type: SchemaType.AVRO, schema: text }, eventAvroOptions);

describe('the event schemas with eventAvroOptions', () => {
  const coupon = {
    event_key: 'coupon-expired-9223372036854775807-1924992000123',
    event_type: 'COUPON_EXPIRED',
    coupon_id: '9223372036854775807',
    user_id: '9007199254740993',
    from_status: 'ACTIVE',
    to_status: 'EXPIRED',
    due_at: 1924992000123,
    occurred_at: 1924992000200,
    path: 'stream',
    version: 1,
  };
  const order = {
    event_key: 'order-cancelled-9007199254740993-1924992000123',
    event_type: 'ORDER_CANCELLED',
    order_id: '9007199254740993',
    user_id: '9223372036854775807',
    from_status: 'UNPAID',
    to_status: 'CANCELLED',
    reason: 'TIMEOUT',
    coupon_id: '9223372036854775807',
    coupon_released: true,
    due_at: 1924992000123,
    occurred_at: 1924992000200,
    path: 'stream',
    version: 2,
  };

  test('ids beyond 2^53 are written and read back exactly (as bigints); times stay numbers', () => {
    const couponType = parse(loadEventSchema(couponExpired));
    expect(couponType.fromBuffer(couponType.toBuffer(coupon))).toEqual({
      ...coupon,
      coupon_id: 9223372036854775807n,
      user_id: 9007199254740993n,
      version: 1n,
    });
    const orderType = parse(loadEventSchema(orderCancelled));
    expect(orderType.fromBuffer(orderType.toBuffer(order))).toEqual({
      ...order,
      order_id: 9007199254740993n,
      user_id: 9223372036854775807n,
      coupon_id: 9223372036854775807n,
      version: 2n,
    });
    expect(orderType.fromBuffer(orderType.toBuffer({ ...order, coupon_id: null }))).toMatchObject({ coupon_id: null });
  });

  test('an id above 2^63 - 1 fails validation at its path (the encoder refuses the event: it is dead-lettered)', () => {
    const paths: string[][] = [];
    parse(loadEventSchema(couponExpired)).isValid({ ...coupon, coupon_id: '18446744073709551615' }, { errorHook: (path) => paths.push(path) });
    expect(paths).toEqual([['coupon_id']]);
  });

  test('parsing the same schema again with the same options works (no shared avsc registry)', () => {
    expect(() => [parse(loadEventSchema(couponExpired)), parse(loadEventSchema(couponExpired))]).not.toThrow();
  });
});
