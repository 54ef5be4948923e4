/**
 * Each command declares what it needs where it is defined, and the program's pre-action hook
 * loads that once. In production a command requires only the settings of what it connects to:
 * an operator running `timebucket ctl pause` from a database-only pod must not be asked for
 * Kafka brokers or the registry's URL, and `offsets reset` needs no database password.
 */
import type { Command } from 'commander';
import { loadConfig } from '../../../src/config';
import { commandOf, loadSetup, SetupCommand, type Needs } from '../../../src/cli/command-setup';
import { timebucketProgram } from '../../../src/cli/program';
import { ConfigError } from '../../../src/core/errors';

const program = timebucketProgram({});

/** Every command that runs something (`topics apply`, not `topics`), by its command line. */
function commandLines(command: Command = program, path: string[] = []): string[][] {
  if (command.commands.length === 0) return [path];
  return command.commands.flatMap((c) => commandLines(c, [...path, c.name()]));
}

function needsOf(args: string[]): Needs {
  const needs = commandOf(program, args)?.needs;
  if (needs === undefined) throw new Error(`${args.join(' ')} declares no needs`);
  return needs;
}

/** The problems loadConfig reports for `env` and the command line `args`, [] when it loads. */
function problemsOf(env: Record<string, string>, args: string[]): string[] {
  try {
    loadConfig(env, { uses: needsOf(args).uses });
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
}

// Every command reads the entities file, most the topology: given in every case.
const production = { TB_ENV: 'production', TB_ENTITIES: 'entities/default.json', TB_TOPOLOGY: 'topics/production.json' };
const database = { TB_DB_HOST: 'db.example', TB_DB_NAME: 'shop', TB_DB_USER: 'ops', TB_DB_PASSWORD: 'x' };
const kafka = { TB_KAFKA_BROKERS: 'kafka-0:9092' };

test('every command declares its needs, the entities file among them', () => {
  const lines = commandLines().map((args) => args.join(' '));
  expect(lines).toEqual(expect.arrayContaining(['run', 'migrate', 'topics apply', 'ctl pause', 'ctl status', 'offsets reset', 'explain']));
  for (const args of commandLines()) {
    const needs = commandOf(program, args)?.needs;
    expect({ command: args.join(' '), uses: needs?.uses.includes('entities'), logTo: needs?.logTo }).toEqual({
      command: args.join(' '),
      uses: true,
      logTo: expect.stringMatching(/^(stdout|stderr)$/),
    });
  }
});

test.each([
  ['ctl pause', ['ctl', 'pause'], database],
  ['ctl status', ['ctl', 'status'], database],
  ['offsets reset', ['offsets', 'reset'], kafka],
  ['backfill', ['backfill'], { ...database, ...kafka }],
])('%s loads in production with only the settings of what it connects to', (_name, args, given) => {
  expect(problemsOf({ ...production, ...given }, args)).toEqual([]);
});

test('what a command does not get is named, and only that', () => {
  // offsets reset reads Kafka: without brokers it says so, and asks nothing about the database.
  const problems = problemsOf({ ...production, ...database }, ['offsets', 'reset']);
  expect(problems).toEqual([expect.stringMatching(/^TB_KAFKA_BROKERS: required when TB_ENV=production/)]);
  // ctl without its database: the database settings, nothing of Kafka or the registry.
  const ctl = problemsOf({ ...production, ...kafka }, ['ctl', 'status']);
  expect(ctl.length).toBeGreaterThan(0);
  expect(ctl.every((p) => p.startsWith('TB_DB_'))).toBe(true);
});

test('run and replay need every part', () => {
  for (const command of ['run', 'replay'])
    expect(problemsOf({ ...production, ...database }, [command]).some((p) => p.startsWith('TB_KAFKA_BROKERS'))).toBe(true);
});

test('a command that talks to Kafka gets its SASL settings checked; one that does not, neither checked nor handed', () => {
  const sasl = { TB_KAFKA_SASL_MECHANISM: 'scram-sha-512' };
  for (const args of commandLines()) {
    const problems = problemsOf(sasl, args);
    if (needsOf(args).uses.includes('kafka'))
      expect({ args, problems }).toEqual({ args, problems: expect.arrayContaining([expect.stringMatching(/^TB_KAFKA_SASL_USERNAME/)]) });
    else {
      expect({ args, problems }).toEqual({ args, problems: [] });
      expect(loadConfig(sasl, { uses: needsOf(args).uses }).kafka.sasl).toBeUndefined();
    }
  }
});

test('the setup holds the topology exactly when the command declares it', () => {
  for (const args of commandLines()) {
    const needs = needsOf(args);
    const setup = loadSetup(needs, {});
    expect({ args, topology: 'topology' in setup }).toEqual({ args, topology: needs.uses.includes('topology') });
    expect(setup.catalogue.entities.length).toBeGreaterThan(0);
  }
});

describe('the pre-action hook', () => {
  function tiny(env: NodeJS.ProcessEnv, seen: unknown[]): SetupCommand {
    const root = new SetupCommand('tiny').exitOverride().loadNeedsBeforeActions(env);
    root
      .command('look')
      .option('--loud')
      .actionWith({ uses: ['db', 'entities'], logTo: 'stderr' }, (setup, opts: { loud?: boolean }) => void seen.push(setup.config.db.port, opts.loud));
    root.command('bare').action(() => void seen.push('bare ran'));
    return root;
  }

  test('loads what the command declared and hands it to the action, before its own arguments', async () => {
    const seen: unknown[] = [];
    await tiny({ TB_DB_PORT: '3307' }, seen).parseAsync(['look', '--loud'], { from: 'user' });
    expect(seen).toEqual([3307, true]);
  });

  test('a bad configuration stops the command before its action', async () => {
    const seen: unknown[] = [];
    await expect(tiny({ TB_DB_PORT: 'not-a-port' }, seen).parseAsync(['look'], { from: 'user' })).rejects.toThrow(ConfigError);
    expect(seen).toEqual([]);
  });

  test('a command that declares nothing does not run', async () => {
    const seen: unknown[] = [];
    await expect(tiny({}, seen).parseAsync(['bare'], { from: 'user' })).rejects.toThrow(/bare: the command declares no needs/);
    expect(seen).toEqual([]);
  });
});
