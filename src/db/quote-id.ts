/**
 * Backtick-quotes an identifier that came from the entities file. The file's identifiers are
 * already restricted to plain ones (core/entity-file.ts IDENTIFIER), so this never needs to
 * escape; it refuses anything else, so no caller can splice arbitrary text into SQL.
 */
import { IDENTIFIER } from '../core/entity-file';

export function quoteId(name: string): string {
  if (!IDENTIFIER.test(name)) throw new RangeError(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return `\`${name}\``;
}
