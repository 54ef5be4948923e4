/**
 * A BIGINT column value, as read by mysql2, → its exact decimal string.
 *
 * With `supportBigNumbers` (knex.ts) mysql2 returns a BIGINT as a number while it is a safe
 * integer and as its decimal string beyond 2^53, so String() of either is exact. A number
 * beyond 2^53 here would mean that option was lost and the value is already rounded: a
 * programmer error, thrown, never turned into an id that names another row.
 */
const INTEGER_TEXT = /^-?[0-9]+$/;

export function bigintString(value: unknown, column: string): string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string' && INTEGER_TEXT.test(value)) return value;
  if (typeof value === 'bigint') return String(value);
  throw new TypeError(`${column}: expected a BIGINT as a safe integer or a decimal string, got ${typeof value} ${String(value)}`);
}
