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

// Every command that runs something, with what its usage requires: each reads its configuration
// in the program's pre-action hook, before its action connects to anything.
const commandLines = [
  ['run'],
  ['migrate'],
  ['topics', 'apply'],
  ['schemas', 'register'],
  ['cdc-tail'],
  ['backfill'],
  ['replay', '--at', '2026-01-01T00:00:00Z'],
  ['offsets', 'reset', '--at', '2026-01-01T00:00:00Z'],
  ['ctl', 'pause', '--what', 'coupon'],
  ['ctl', 'resume', '--what', 'coupon'],
  ['ctl', 'throttle', '--what', 'coupon', '--per-second', '5'],
  ['ctl', 'unthrottle', '--what', 'coupon'],
  ['ctl', 'status'],
  ['connector', 'config'],
  ['check'],
  ['sql', 'effective-view'],
  ['forecast'],
  ['explain', 'coupon', '1'],
];

test.each(commandLines.map((args) => [args.join(' '), args]))('%s: bad configuration exits 78 before connecting to anything', (_name, args) => {
  const r = cli(args, { TB_DB_PORT: 'not-a-port' });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 78, stderr: expect.stringMatching(/TB_DB_PORT/) });
});

test('a usage error the command line alone shows comes before the configuration: explain with a non-decimal id exits 64', () => {
  const r = cli(['explain', 'coupon', 'abc'], { TB_DB_PORT: 'not-a-port' });
  expect(r.status).toBe(64);
  expect(r.stderr).toMatch(/the id must be a decimal integer/);
});
