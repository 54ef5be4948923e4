/**
 * The Avro `long` of our event schemas, exact over all 64 bits.
 *
 * avsc's own long is a JS number, exact only up to 2^53, while the ids in our events are
 * BIGINT UNSIGNED and snowflake-style ids pass 2^53. So every plain `long` (ids, version) is
 * this type instead:
 *   writing  a bigint, a safe integer, or a canonical decimal string (the outbox payload carries
 *            ids that way), within the signed 64-bit range. Anything else is invalid, so the encoder
 *            refuses the event (it is dead-lettered) rather than publish a wrong id: a number beyond 2^53
 *            (it may already be rounded), or an id above 2^63-1 (an Avro long is signed).
 *   reading  always a bigint.
 * The wire format is Avro's own zig-zag varint: subscribers in any language read a long, and
 * the registered schemas are unchanged.
 *
 * A long with a logicalType (timestamp-millis: due_at, occurred_at) keeps avsc's type, so it
 * stays a JS number on both sides: epoch milliseconds within a Date's range are below 2^53.
 */
import { Schema, Type, types } from 'avsc';

const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;
/** Canonical: one string per value (no sign on zero, no leading zeros, no '+'). 20 chars fit any long. */
const CANONICAL_INTEGER = /^(0|-?[1-9][0-9]{0,18})$/;

/** The exact value of anything the type accepts, or undefined. */
function toLong(value: unknown): bigint | undefined {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  else if (typeof value === 'string' && CANONICAL_INTEGER.test(value)) n = BigInt(value);
  else return undefined;
  return n >= MIN_LONG && n <= MAX_LONG ? n : undefined;
}

function checkedLong(value: unknown): bigint {
  const n = toLong(value);
  if (n === undefined) throw new TypeError(`not an exact Avro long: ${typeof value} ${String(value)}`);
  return n;
}

const longScratch = Buffer.alloc(8);

export const exactLong: Type = types.LongType.__with({
  // avsc hands over and takes back the value as 8 bytes, little-endian two's complement.
  fromBuffer: (buf: Buffer): bigint => buf.readBigInt64LE(0),
  // One buffer for every write: avsc reads the 8 bytes into its varint at once (LongType's
  // _write), so nothing keeps it; an allocation per long was garbage on the expirer's hot path.
  toBuffer: (value: unknown): Buffer => {
    longScratch.writeBigInt64LE(checkedLong(value));
    return longScratch;
  },
  // JSON form (defaults, Type#toString): a number while exact, else the decimal string.
  fromJSON: (json: unknown): bigint => checkedLong(json),
  toJSON: (value: unknown): number | string => {
    const n = checkedLong(value);
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : String(n);
  },
  isValid: (value: unknown): boolean => toLong(value) !== undefined,
  compare: (a: unknown, b: unknown): number => {
    const [x, y] = [checkedLong(a), checkedLong(b)];
    return x === y ? 0 : x < y ? -1 : 1;
  },
});

/**
 * avsc `typeHook`: a plain `long` (a reference by name, or `{ "type": "long" }` without a
 * logicalType) becomes exactLong. A hook rather than avsc's `registry` option because avsc adds
 * every named type it parses to that registry: a registry shared by the registry client's
 * parses would fail the second parse of a schema with "duplicate type name".
 */
export function exactLongHook(schema: Schema): Type | undefined {
  if (schema === 'long') return exactLong;
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) {
    const s = schema as { type?: unknown; logicalType?: unknown };
    if (s.type === 'long' && s.logicalType === undefined) return exactLong;
  }
  return undefined;
}
