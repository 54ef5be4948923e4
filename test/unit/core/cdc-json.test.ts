import fc from 'fast-check';
import { stringify as losslessStringify } from 'lossless-json';
import { needsLosslessParse, parseCdcJson } from '../../../src/core/cdc-json';
import { decodeCdcValue } from '../../../src/core/cdc-envelope';

// Counts the slow path's calls; everything else is the real library.
jest.mock('lossless-json', () => {
  const actual = jest.requireActual<typeof import('lossless-json')>('lossless-json');
  return { ...actual, parse: jest.fn(actual.parse) };
});
const losslessParse = jest.requireMock<{ parse: jest.Mock }>('lossless-json').parse;

beforeEach(() => losslessParse.mockClear());

/** A coupon update as Debezium 3.5's JSON converter wrote it on the local stack (ms, µs and ns stamps). */
const realRecord = (id: string) =>
  `{"before":{"id":${id},"user_id":4668398763,"status":"ACTIVE","expire_time":1796025101356,"locked_order_id":null,"expired_at":null,"version":0,"created_at":1796025094256,"updated_at":1796025094256},` +
  `"after":{"id":${id},"user_id":4668398763,"status":"EXPIRED","expire_time":1796025101356,"locked_order_id":null,"expired_at":1796025101358,"version":1,"created_at":1796025094256,"updated_at":1796025101358},` +
  `"source":{"version":"3.5.0.Final","connector":"mariadb","name":"tbcdc","ts_ms":1796025101000,"snapshot":"false","db":"timebucket","sequence":null,"ts_us":1796025101000000,"ts_ns":1796025101000000000,"table":"coupons","server_id":1,"gtid":"0-1-3041","file":"binlog.000001","pos":8985221,"row":0,"thread":null,"query":null},` +
  `"transaction":null,"op":"u","ts_ms":1796025101360,"ts_us":1796025101360223,"ts_ns":1796025101360223225}`;

describe('the fast path', () => {
  test('a real record (13-digit ms, 16-digit µs, 19-digit ns stamps) is parsed by JSON.parse alone', () => {
    const text = realRecord('2711');
    expect(needsLosslessParse(text)).toBe(false);
    const event = decodeCdcValue(text);
    expect(losslessParse).not.toHaveBeenCalled();
    expect(event).toMatchObject({ kind: 'change', op: 'u', after: { id: 2711, expire_time: 1796025101356 } });
    expect(parseCdcJson(text)).toEqual(JSON.parse(text));
  });

  test('the same record with an id beyond 2^53 takes the lossless parser, and only then', () => {
    const event = decodeCdcValue(realRecord('9223372036854775807'));
    expect(losslessParse).toHaveBeenCalledTimes(1);
    expect(event).toMatchObject({ kind: 'change', after: { id: 9223372036854775807n }, before: { id: 9223372036854775807n } });
  });

  test.each([
    ['9007199254740991', false], // MAX_SAFE_INTEGER, 16 digits
    ['-9007199254740991', false],
    ['1796025101360223', false], // a µs stamp
    ['9007199254740992', true],
    ['-9007199254740993', true],
    ['12345678901234567', true],
    ['"12345678901234567890"', true], // in a string: needless but harmless
  ])('a value of %s needs the lossless parser: %s', (literal, slow) => {
    expect(needsLosslessParse(`{"a":1,"x":${literal}}`)).toBe(slow);
  });

  test('the skip scan finds every unsafe digit run a plain scan finds (property)', () => {
    const unsafe = (run: string) => run.length > 16 || (run.length === 16 && run > '9007199254740991');
    const reference = (text: string) => [...text.matchAll(/\d+/g)].some((m) => unsafe(m[0]) && !text.slice(0, m.index).endsWith('"ts_ns":'));
    // Digit-heavy text with the odd separator and ts_ns key, so runs of every length around 16 occur.
    const boundary = fc.constantFrom('9007199254740991', '9007199254740992', '9999999999999999', '1796025101360223');
    const piece = fc.oneof(fc.constantFrom('9', '0', '1', '"ts_ns":', ',', '"', 'x'), boundary, fc.stringMatching(/^[0-9]{1,20}$/));
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 40 }).map((p) => p.join('')),
        (text) => needsLosslessParse(text) === reference(text),
      ),
      { numRuns: 2000 },
    );
  });

  test('a ts_ns stamp alone does not; any other long integer beside it does', () => {
    expect(needsLosslessParse('{"ts_ns":1796025101360223225,"source":{"ts_ns":1796025101000000000}}')).toBe(false);
    expect(needsLosslessParse('{"ts_ns":1796025101360223225,"x_ns":1796025101360223225}')).toBe(true);
  });
});

describe('parseCdcJson', () => {
  test.each(['9007199254740992', '9007199254740993', '9223372036854775807', '18446744073709551615', '-9223372036854775808'])(
    'an integer literal %s beyond the safe range decodes to its exact bigint',
    (literal) => {
      expect(parseCdcJson(`{"id":${literal},"n":[${literal}]}`)).toEqual({ id: BigInt(literal), n: [BigInt(literal)] });
    },
  );

  test('beside it, every other value decodes as JSON.parse decodes it', () => {
    const rest = '"s":"12345678901234567890","f":0.30000000000000004,"e":1e300,"z":-0,"small":42,"t":true,"nil":null';
    const parsed = parseCdcJson(`{"id":9223372036854775807,${rest}}`) as Record<string, unknown>;
    expect(parsed).toEqual({ id: 9223372036854775807n, ...JSON.parse(`{${rest}}`) });
    expect(Object.is(parsed['z'], -0)).toBe(true);
  });

  test('ts_ns stays the number JSON.parse makes of it, on either path', () => {
    const ns = '1796025101360223225';
    const fast = parseCdcJson(`{"ts_ns":${ns}}`) as { ts_ns: unknown };
    const slow = parseCdcJson(`{"ts_ns":${ns},"id":9223372036854775807}`) as { ts_ns: unknown };
    expect(fast.ts_ns).toBe(JSON.parse(ns));
    expect(slow.ts_ns).toBe(JSON.parse(ns));
  });

  test('which path a record takes never changes what it decodes to (property)', () => {
    // Ids as often below 2^53 (fast path, unless the other one is not) as beyond it (slow path).
    const id = fc.oneof(fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }), fc.bigInt({ min: 2n ** 53n, max: 18446744073709551615n }));
    const row = fc.record({
      id,
      user_id: id,
      expire_time: fc.integer({ min: 0, max: 4102444800000 }),
      // A double with an integer value beyond 2^53 is written as an integer literal: a bigint, by design.
      ratio: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x) || Number.isSafeInteger(x)),
      status: fc.string(),
      ts_ns: fc.bigInt({ min: 10n ** 18n, max: 2n ** 63n - 1n }),
    });
    fc.assert(
      fc.property(row, (r) => {
        const text = losslessStringify(r)!;
        const plain = JSON.parse(text) as Record<string, unknown>;
        const exact = (n: bigint) => (n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n);
        expect(parseCdcJson(text)).toEqual({ ...plain, id: exact(r.id), user_id: exact(r.user_id) });
      }),
    );
  });

  test('duplicate keys: the last wins on both paths, as with JSON.parse', () => {
    expect(parseCdcJson('{"a":1,"a":2}')).toEqual({ a: 2 });
    expect(parseCdcJson('{"a":1,"a":9223372036854775807}')).toEqual({ a: 9223372036854775807n });
  });

  test('a "__proto__" key is an own property on the slow path too, never the prototype', () => {
    const parsed = parseCdcJson('{"__proto__":{"polluted":true},"id":9223372036854775807}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  test.each(['{"id":9223372036854775807,}', '{"id":12345678901234567890', '[9223372036854775807]x'])('invalid JSON %s throws on the slow path too', (text) => {
    expect(() => parseCdcJson(text)).toThrow(SyntaxError);
  });
});
