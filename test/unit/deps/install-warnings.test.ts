/**
 * A newcomer's first `npm ci` prints no warning we know of. Two that it printed, held off here
 * from the lock file alone (no install, no registry):
 *
 *  - EBADENGINE: a locked package whose `engines.node` the oldest Node our own `engines.node`
 *    allows does not satisfy (kubernetes-models 5 and its siblings wanted Node ≥ 22 while the
 *    README asked for ≥ 20; the 4.x line is pinned instead, test/deploy/strimzi-model/README.md);
 *  - "install scripts not yet covered by allowScripts" (npm 11): a locked package with an install
 *    script that package.json's `allowScripts` neither allows nor denies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

type LockedPackage = { version?: string; engines?: { node?: string } | string[]; hasInstallScript?: boolean; optional?: boolean };

const root = join(__dirname, '../../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string }; allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };

/** The package name of a lock entry's path (node_modules/a/node_modules/@s/b -> @s/b). */
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
const locked = Object.entries(lock.packages).filter(([path]) => path !== '');

test('every locked package runs on the oldest Node that package.json allows (no EBADENGINE)', () => {
  const oldest = semver.minVersion(manifest.engines.node);
  expect(oldest).not.toBeNull();
  const refused = locked
    .map(([path, p]) => ({ path, version: p.version, node: Array.isArray(p.engines) ? undefined : p.engines?.node }))
    .filter((p) => p.node !== undefined && !semver.satisfies(oldest!, p.node))
    .map((p) => `${nameOf(p.path)}@${p.version} wants node ${p.node}`);
  expect(refused).toEqual([]);
});

test('the lock file names the same Node as package.json', () => {
  expect(lock.packages['']?.engines).toEqual(manifest.engines);
});

test('every locked package with an install script is allowed or denied in allowScripts', () => {
  const reviewed = new Set(Object.keys(manifest.allowScripts ?? {}).map((k) => k.replace(/(.)@.*$/, '$1')));
  const unreviewed = locked.filter(([, p]) => p.hasInstallScript).map(([path, p]) => `${nameOf(path)}@${p.version}`);
  expect(unreviewed.filter((p) => !reviewed.has(p.replace(/(.)@.*$/, '$1')))).toEqual([]);
});
