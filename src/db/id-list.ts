/**
 * A batch's ids as the text of an SQL IN list of integer literals: `5, 7, 9007199254740993`.
 *
 * Why not bindings: knex expands an array binding into one placeholder per id and mysql2 then
 * escapes each as a quoted string, which the server converts back to compare with the BIGINT
 * key; for the expiry's 2,000-id lock and update that was most of their client cost. The ids
 * come from decoded bucket entries (core/bucket-entry.ts: canonical decimals within BIGINT
 * UNSIGNED); this text is SQL, so each is checked again to be digits only, and anything else is
 * a programmer error, thrown before a statement is sent.
 */
export function idList(ids: readonly string[]): string {
  for (const id of ids) {
    if (!isDigits(id)) throw new RangeError(`not a decimal id: ${JSON.stringify(id)}`);
  }
  return ids.join(', ');
}

/** 1 to 20 digits: BIGINT UNSIGNED's widest, nothing else. */
const DIGITS = /^[0-9]{1,20}$/;

function isDigits(s: string): boolean {
  return typeof s === 'string' && DIGITS.test(s);
}
