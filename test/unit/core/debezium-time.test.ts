import { decodeDebeziumInstant } from '../../../src/core/debezium-time';
import { CdcInvalidError } from '../../../src/core/errors';

// 2031-01-02T03:04:05.678Z, the instant the integration test writes.
const T = Date.UTC(2031, 0, 2, 3, 4, 5, 678);

describe('decodeDebeziumInstant', () => {
  test.each([
    ['io.debezium.time.Timestamp (ms)', T, 'io.debezium.time.Timestamp', T],
    ['org.apache.kafka.connect.data.Timestamp (ms)', T, 'org.apache.kafka.connect.data.Timestamp', T],
    ['io.debezium.time.MicroTimestamp (µs)', T * 1000 + 999, 'io.debezium.time.MicroTimestamp', T],
    // ~1.9e18 is beyond 2^53 and already rounded by JSON.parse; the ms part is still exact.
    ['io.debezium.time.NanoTimestamp (ns)', T * 1_000_000 + 456_789, 'io.debezium.time.NanoTimestamp', T],
    ['io.debezium.time.ZonedTimestamp (Z)', '2031-01-02T03:04:05.678Z', 'io.debezium.time.ZonedTimestamp', T],
    ['io.debezium.time.ZonedTimestamp (+02:00)', '2031-01-02T05:04:05.678+02:00', 'io.debezium.time.ZonedTimestamp', T],
    ['io.debezium.time.ZonedTimestamp (-05:30)', '2031-01-01T21:34:05.678-05:30', 'io.debezium.time.ZonedTimestamp', T],
    ['no schema, integer (ms of a DATETIME(3))', T, undefined, T],
    ['no schema, ISO string with Z', '2031-01-02T03:04:05.678Z', undefined, T],
    ['no schema, ISO string with offset', '2031-01-02T04:04:05.678+01:00', undefined, T],
    ['epoch zero', 0, 'io.debezium.time.Timestamp', 0],
  ])('%s', (_name, value, schema, expected) => {
    expect(decodeDebeziumInstant(value, schema)).toBe(expected);
  });

  test('floors sub-millisecond precision toward the past, also before 1970', () => {
    expect(decodeDebeziumInstant(1_999, 'io.debezium.time.MicroTimestamp')).toBe(1);
    expect(decodeDebeziumInstant(-1, 'io.debezium.time.MicroTimestamp')).toBe(-1);
    expect(decodeDebeziumInstant(-1_000, 'io.debezium.time.MicroTimestamp')).toBe(-1);
    expect(decodeDebeziumInstant(-1, 'io.debezium.time.NanoTimestamp')).toBe(-1);
    expect(decodeDebeziumInstant('2031-01-02T03:04:05.678999999Z', 'io.debezium.time.ZonedTimestamp')).toBe(T);
  });

  test('accepts ISO forms Debezium trims: no fraction, short fraction, no seconds', () => {
    expect(decodeDebeziumInstant('2031-01-02T03:04:05Z', undefined)).toBe(Date.UTC(2031, 0, 2, 3, 4, 5));
    expect(decodeDebeziumInstant('2031-01-02T03:04:05.6Z', undefined)).toBe(Date.UTC(2031, 0, 2, 3, 4, 5, 600));
    expect(decodeDebeziumInstant('2031-01-02T03:04Z', undefined)).toBe(Date.UTC(2031, 0, 2, 3, 4));
  });

  test.each([
    ['ISO without offset (bare)', '2031-01-02T03:04:05.678', undefined, /offset/],
    ['ISO without offset (zoned schema)', '2031-01-02T03:04:05.678', 'io.debezium.time.ZonedTimestamp', /offset/],
    ['a date only', '2031-01-02', undefined, /offset/],
    ['a space instead of T', '2031-01-02 03:04:05Z', undefined, /offset/],
    ['an impossible date', '2031-02-30T00:00:00Z', undefined, /no such date/],
    ['hour 24', '2031-01-02T24:00:00Z', undefined, /out-of-range/],
    ['an offset beyond ±18h', '2031-01-02T03:04:05+19:00', undefined, /out-of-range/],
    ['a fractional number', 1.5, undefined, /integer/],
    ['a fractional Timestamp', 1.5, 'io.debezium.time.Timestamp', /integer/],
    ['NaN', NaN, undefined, /integer/],
    ['Infinity', Infinity, 'io.debezium.time.Timestamp', /integer/],
    ['beyond the Date range', 8.64e15 + 1, undefined, /out of range/],
    ['µs beyond the Date range', 8.64e18 + 8192, 'io.debezium.time.MicroTimestamp', /out of range/],
    ['null', null, undefined, /got null/],
    ['undefined', undefined, undefined, /got undefined/],
    ['a boolean', true, undefined, /got boolean/],
    ['an object', { ms: T }, undefined, /got object/],
    ['a string for Timestamp', String(T), 'io.debezium.time.Timestamp', /must be a number/],
    ['a number for ZonedTimestamp', T, 'io.debezium.time.ZonedTimestamp', /must be a string/],
    ['a date, not an instant', 22281, 'io.debezium.time.Date', /unsupported temporal schema/],
    ['a prototype key as schema', T, 'toString', /unsupported temporal schema/],
  ])('rejects %s', (_name, value, schema, reason) => {
    const decode = () => decodeDebeziumInstant(value, schema);
    expect(decode).toThrow(CdcInvalidError);
    expect(decode).toThrow(reason);
  });

  test('errors are data for the DLQ: code CDC_INVALID, not retriable, value in details', () => {
    let caught: unknown;
    try {
      decodeDebeziumInstant('2031-01-02T03:04:05', undefined);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CdcInvalidError);
    expect(caught).toMatchObject({ code: 'CDC_INVALID', retriable: false, details: { value: '2031-01-02T03:04:05' } });
  });
});
