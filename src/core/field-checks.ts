/**
 * Checks and wording shared by the decoders of CDC changes and bucket entries: a row id's
 * canonical decimal text, and how a bad value is named in an error. Pure.
 */

/** 2^64 - 1: ids are BIGINT UNSIGNED. */
export const MAX_BIGINT_UNSIGNED = 18446744073709551615n;

/** Canonical (no sign, no leading zeros) so one row has one id string, within BIGINT UNSIGNED. */
const MAX_BIGINT_UNSIGNED_TEXT = MAX_BIGINT_UNSIGNED.toString();

export function isDecimalId(s: string): boolean {
  // Fewer than 20 digits is below 10^19 < 2^64; only 20 digits need the comparison, which for
  // canonical digit strings of one length is the strings' own order (no BigInt per record).
  return /^[1-9][0-9]{0,19}$/.test(s) && (s.length < 20 || s <= MAX_BIGINT_UNSIGNED_TEXT);
}

export function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

export function describe(v: unknown): string {
  if (typeof v === 'bigint') return String(v);
  return v === undefined ? 'undefined' : typeof v === 'string' || typeof v === 'number' ? JSON.stringify(v) : typeName(v);
}
