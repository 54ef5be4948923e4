/**
 * JSON text of a CDC record → values, with every integer exact.
 *
 * Debezium's JSON converter writes an int64 column (BIGINT, and BIGINT UNSIGNED in its default
 * `long` mode) as a JSON number. JSON.parse makes every number a double, exact only up to 2^53,
 * so a snowflake id such as 9223372036854775807 would arrive rounded — and a rounded id names
 * another row. Here an integer literal beyond Number.MAX_SAFE_INTEGER decodes to a bigint;
 * every other number decodes exactly as JSON.parse decodes it.
 *
 * Fast path. A JS parser is ~3x slower than JSON.parse, the repartitioner parses every record,
 * and most records hold no unsafe integer. An unsafe integer literal has at
 * least 16 digits, so text without such a run of digits takes JSON.parse, with the same result.
 * One exception keeps real records on that path: Debezium (2.6+) stamps every envelope and
 * source block with `ts_ns`, nanoseconds since 1970 (19 digits). Nobody reads it exactly, so a
 * `ts_ns` value decodes to a (rounded) number on both paths, as it always did.
 * Invariant: which path a record takes never changes what it decodes to.
 *
 * Pure; `lossless-json` is a dependency-free parser with no I/O.
 */
import { parse as losslessParse } from 'lossless-json';

/** 9007199254740991: a 16-digit run above it (as text, same length) cannot be a safe integer. */
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);
const RUN = MAX_SAFE_DIGITS.length; // 16: no shorter integer literal is unsafe
const INTEGER_LITERAL = /^-?\d+$/;
/** The one key whose unsafe integers stay (rounded) numbers: Debezium's nanosecond timestamps. */
const ROUNDED_KEY = 'ts_ns';
const ROUNDED_KEY_PREFIX = `"${ROUNDED_KEY}":`; // compact JSON, as the converter writes it

export function parseCdcJson(text: string): unknown {
  if (!needsLosslessParse(text)) return JSON.parse(text);
  return losslessParse(text, roundNanoStamps, {
    parseNumber: exactNumber,
    // JSON.parse keeps the last of duplicate keys; so does this path, so both agree.
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

/**
 * True when the text may hold an integer literal JSON.parse would round (outside `ts_ns`).
 * Conservative: a long digit run inside a string or a fraction only costs the slower parse.
 *
 * A skip scan, ~6x cheaper than JSON.parse of the same text (a regex scan costs as much as the
 * parse): a run of 16 digits covers every 16th position, so only those are looked at; a digit
 * there is widened to its whole run. If position i is not a digit, no 16-digit run includes it,
 * so the next one that could start has its 16th digit at i + 16 or later.
 */
export function needsLosslessParse(text: string): boolean {
  const n = text.length;
  let i = RUN - 1;
  while (i < n) {
    if (!isDigit(text.charCodeAt(i))) {
      i += RUN;
      continue;
    }
    let start = i;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start -= 1;
    let end = i + 1;
    while (end < n && isDigit(text.charCodeAt(end))) end += 1;
    const length = end - start;
    const unsafe = length > RUN || (length === RUN && text.slice(start, end) > MAX_SAFE_DIGITS);
    if (unsafe && !text.startsWith(ROUNDED_KEY_PREFIX, start - ROUNDED_KEY_PREFIX.length)) return true;
    i = end + RUN; // text[end] is not a digit: the next run starts after it
  }
  return false;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57; // '0'..'9'
}

/** An integer literal that a double cannot hold exactly → bigint; anything else → what JSON.parse gives. */
function exactNumber(literal: string): number | bigint {
  const n = Number(literal);
  return Number.isSafeInteger(n) || !INTEGER_LITERAL.test(literal) ? n : BigInt(literal);
}

/** Number(bigint) rounds to nearest, ties to even: the same double JSON.parse makes of the literal. */
function roundNanoStamps(key: string, value: unknown): unknown {
  return key === ROUNDED_KEY && typeof value === 'bigint' ? Number(value) : value;
}
