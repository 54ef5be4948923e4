/**
 * The error codes as a contract (core/errors.ts): dead letters, logs and alerts carry them, so a
 * listed code that nothing raises is a promise the code does not keep, and a code raised but not
 * listed has no zero-initialised series. The compiler enforces the second for TimebucketError;
 * this reads the sources for the first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes } from '../../../src/core/errors';

const src = join(__dirname, '../../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

test('every listed error code is raised somewhere outside the list itself', () => {
  const text = sources(src)
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const listing = readFileSync(join(src, 'core/errors.ts'), 'utf8');
  const outsideList = text.replace(listing.slice(listing.indexOf('export const ErrorCodes'), listing.indexOf('] as const;')), '');
  expect(ErrorCodes.filter((code) => !outsideList.includes(`'${code}'`))).toEqual([]);
});
