/**
 * The built command as the image runs it: `--version`, and an exit code per kind of failure that
 * needs no running service (bad usage 64, bad configuration 78; a runtime failure's 1 and topic
 * drift's 3 are in test/integration/ops/process-health.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliPath } from '../support/cli';

const { version } = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string };
const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [cliPath, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 });

test('--version prints the package version and exits 0', () => {
  const r = cli(['--version']);
  expect(r.status).toBe(0);
  expect(r.stdout.trim()).toBe(version);
});

test('an unknown command or option exits 64 (EX_USAGE) with the help', () => {
  const unknownCommand = cli(['expire-everything']);
  expect(unknownCommand.status).toBe(64);
  expect(unknownCommand.stderr).toMatch(/unknown command 'expire-everything'/);
  const badRole = cli(['run', '--roles', 'expirer,teleporter']);
  expect(badRole.status).toBe(64);
  expect(badRole.stderr).toMatch(/unknown role\(s\) teleporter/);
});

test('bad configuration exits 78 (EX_CONFIG) before connecting to anything', () => {
  const r = cli(['migrate'], { TB_DB_PORT: 'not-a-port' });
  expect(r.status).toBe(78);
  expect(r.stderr).toMatch(/TB_DB_PORT/);
});
