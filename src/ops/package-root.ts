/**
 * The package root: the nearest folder above a compiled file with a package.json. src/… under
 * ts-jest, dist/… when built, dist-bench/src/… in the benchmark build, /app/dist/… in the image.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../core/errors';

export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(resolve(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir)
      throw new ConfigError(`no package.json above ${from}: timebucket runs from its package (dist/ beside package.json)`, { problems: ['package.json'] });
  }
}

/** The version in the package's package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(resolve(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
