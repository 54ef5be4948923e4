/**
 * Debezium temporal values → epoch milliseconds (UTC instant).
 *
 * The Connect schema name of a column says how its value is encoded; the value alone cannot
 * (1924992000123 could be ms or µs). With the schema wrapper we know the name, without it we
 * assume what our own columns produce: DATETIME(3) → io.debezium.time.Timestamp (ms).
 *
 *   io.debezium.time.Timestamp                int64 ms    DATETIME(0-3)
 *   io.debezium.time.MicroTimestamp           int64 µs    DATETIME(4-6), adaptive_time_microseconds
 *   io.debezium.time.NanoTimestamp            int64 ns    other connectors; kept for completeness
 *   io.debezium.time.ZonedTimestamp           ISO-8601 string with offset (TIMESTAMP columns)
 *   org.apache.kafka.connect.data.Timestamp   int64 ms    time.precision.mode=connect
 *
 * DATETIME has no zone: Debezium encodes the wall-clock value as if it were UTC. The application
 * writes UTC (see the migration), so that number IS the instant. Finer-than-ms values are
 * floored, never rounded: rounding up could move a due time past the DB's own `expire_time`
 * and make the expirer find the row "not yet due" (I2 keeps it safe, but it costs a re-schedule).
 *
 * Pure: no clock, no I/O. Anything it cannot decode exactly throws CdcInvalidError (I5: DLQ).
 */
import { CdcInvalidError } from './errors';

/** The range of a JS Date (±100,000,000 days): anything outside is not an instant we can use. */
export const MAX_ABS_MS = 8.64e15;

const INTEGER_UNITS_PER_MS: Readonly<Record<string, bigint>> = {
  'io.debezium.time.Timestamp': 1n,
  'org.apache.kafka.connect.data.Timestamp': 1n,
  'io.debezium.time.MicroTimestamp': 1_000n,
  'io.debezium.time.NanoTimestamp': 1_000_000n,
};
const ZONED = 'io.debezium.time.ZonedTimestamp';

export function decodeDebeziumInstant(value: unknown, schemaName: string | undefined): number {
  if (schemaName === undefined) {
    if (typeof value === 'number') return fromInteger(value, 1n, undefined);
    if (typeof value === 'string') return fromIso(value, undefined);
    throw invalid(`expected epoch ms or an ISO-8601 string, got ${describe(value)}`, value, schemaName);
  }
  const unitsPerMs = Object.hasOwn(INTEGER_UNITS_PER_MS, schemaName) ? INTEGER_UNITS_PER_MS[schemaName] : undefined;
  if (unitsPerMs !== undefined) {
    if (typeof value !== 'number') throw invalid(`${schemaName} must be a number, got ${describe(value)}`, value, schemaName);
    return fromInteger(value, unitsPerMs, schemaName);
  }
  if (schemaName === ZONED) {
    if (typeof value !== 'string') throw invalid(`${ZONED} must be a string, got ${describe(value)}`, value, schemaName);
    return fromIso(value, schemaName);
  }
  throw invalid(`unsupported temporal schema ${JSON.stringify(schemaName)}`, value, schemaName);
}

/**
 * Integer division that floors toward −∞. BigInt because a nanosecond count (~1.9e18) is far
 * beyond 2^53: JSON.parse has already rounded it to a double (±256 ns), and dividing that double
 * exactly adds no second rounding. Near a ms boundary the first can still make the result 1 ms
 * early (safe: I2, the DB guard re-schedules) or a few hundred ns late (negligible).
 */
function fromInteger(value: number, unitsPerMs: bigint, schemaName: string | undefined): number {
  const what = schemaName ?? 'epoch ms';
  if (!Number.isInteger(value)) throw invalid(`${what} must be an integer, got ${value}`, value, schemaName);
  if (unitsPerMs === 1n) return checkRange(value, value, schemaName);
  const units = BigInt(value);
  let ms = units / unitsPerMs; // truncates toward zero
  if (units % unitsPerMs < 0n) ms -= 1n;
  return checkRange(Number(ms), value, schemaName);
}

/**
 * Strict ISO-8601 date-time with an explicit offset, e.g. 2031-01-02T03:04:05.678Z or
 * 2031-01-02T05:04:05+02:00 (Debezium's ZonedTimestamp form). A string without an offset is a
 * local time in an unknown zone: guessing would shift every deadline by hours, so it is rejected.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

function fromIso(text: string, schemaName: string | undefined): number {
  const m = ISO.exec(text);
  if (m === null) throw invalid(`not an ISO-8601 date-time with offset: ${JSON.stringify(text)}`, text, schemaName);
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)); // floor sub-ms digits
  const offsetMin = m[8] === 'Z' ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  if (hour > 23 || minute > 59 || second > 59 || Math.abs(offsetMin) > 18 * 60) {
    throw invalid(`out-of-range field in ${JSON.stringify(text)}`, text, schemaName);
  }
  // Date.UTC maps years 0-99 to 1900+; setUTCFullYear does not. Round-tripping the calendar
  // fields rejects impossible dates such as 2031-02-30 instead of rolling them over.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, millis);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) {
    throw invalid(`no such date in ${JSON.stringify(text)}`, text, schemaName);
  }
  return checkRange(d.getTime() - offsetMin * 60_000, text, schemaName);
}

function checkRange(ms: number, value: unknown, schemaName: string | undefined): number {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > MAX_ABS_MS) throw invalid(`instant out of range: ${String(value)}`, value, schemaName);
  return ms;
}

function invalid(reason: string, value: unknown, schemaName: string | undefined): CdcInvalidError {
  return new CdcInvalidError(reason, { value, schemaName });
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}
