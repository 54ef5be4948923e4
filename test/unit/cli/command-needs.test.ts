/**
 * In production each command requires only the settings of what it connects to: an operator
 * running `timebucket ctl pause` from a database-only pod must not be asked for Kafka brokers or
 * the registry's URL, and `offsets reset` needs no database password.
 */
import { loadConfig } from '../../../src/config';
import { needsOf } from '../../../src/cli/command-needs';
import { ConfigError } from '../../../src/core/errors';

/** The problems loadConfig reports for `env` and the command line `args`, [] when it loads. */
function problemsOf(env: Record<string, string>, args: string[]): string[] {
  try {
    loadConfig(env, { uses: needsOf(args) });
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

test('a command it does not know needs every part (as `run` does)', () => {
  expect(problemsOf({ ...production, ...database }, ['run']).some((p) => p.startsWith('TB_KAFKA_BROKERS'))).toBe(true);
});
