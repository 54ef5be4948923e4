#!/usr/bin/env node
/**
 * The `timebucket` command.
 *   timebucket run [--roles a,b]    run roles (default: all) until SIGINT/SIGTERM
 *   timebucket migrate [--down]     apply (or roll back) the database migrations
 *   timebucket topics apply         create missing declared topics, report drift [--grow-partitions]
 *   timebucket schemas register     register the event schemas, save their ids for `run`
 *   timebucket cdc-tail             print CDC events of the mapped tables
 *   timebucket connector config     print the Debezium connector for the mapped tables
 *   timebucket check                the database, the account and the connectors against the entities file
 *   timebucket sql effective-view   print per table the view of the status a reader should see
 *   timebucket forecast             the entries held per upcoming bucket, from offsets alone
 *   timebucket explain <entity> <id> why one row did or did not move
 *   timebucket --version            print the version
 * Exit codes (sysexits.h where one fits), so scripts and orchestrators can tell failures apart:
 * 0 done; 1 runtime failure; 3 topic drift (topics apply); 64 bad usage (EX_USAGE: unknown
 * command or option); 78 bad configuration (EX_CONFIG); 130/143 stopped by SIGINT/SIGTERM twice.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { loadConfig } from '../config';
import { ConfigError } from '../core/errors';
import { packageVersion } from '../ops/package-root';
import { createLogger } from '../ops/logger';
import { loadTopology } from '../ops/load-topology';
import { loadEntities } from '../ops/load-entities';
import { needsOf } from './command-needs';
import { failureHint } from './failure-hint';
import { migrate } from './migrate';
import { cdcTail } from './cdc-tail';
import { topicsApply } from './topics-apply';
import { schemasRegister } from './schemas-register';
import { run } from './run';
import { Role, Roles } from '../roles';
import { registerBackfillCommand } from './backfill-command';
import { registerReplayCommands } from './replay-command';
import { registerCtlCommands } from './ctl-command';
import { registerConnectorCommands } from './connector-config-command';
import { registerCheckCommand } from './check-command';
import { registerSqlCommands } from './sql-command';
import { registerForecastCommand } from './forecast-command';
import { registerExplainCommand } from './explain-command';

function parseRoles(value: string): Role[] {
  const roles = value
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r.length > 0);
  const unknown = roles.filter((r) => !(Roles as readonly string[]).includes(r));
  if (roles.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`unknown role(s) ${unknown.join(', ')}; known: ${Roles.join(', ')}`);
  return roles as Role[];
}

async function main(argv: string[]): Promise<void> {
  const program = new Command('timebucket')
    .description('time-driven state transitions over Kafka time-bucket rings')
    .version(packageVersion(), '--version', 'print the version and exit')
    .showHelpAfterError()
    // Usage errors are thrown (every subcommand inherits this), so they get their own exit code.
    .exitOverride();

  program
    .command('run')
    .description('run timebucket roles until SIGINT/SIGTERM')
    .option('--roles <list>', `comma-separated roles (${Roles.join(', ')})`, parseRoles, [...Roles])
    .option('--demo', 'also feed a small demo workload and print a live summary')
    .action(async (opts: { roles: Role[]; demo?: boolean }) => {
      const config = loadConfig(process.env);
      const catalogue = loadEntities(config.entitiesPath);
      const code = await run(config, loadTopology(config.topologyPath, catalogue), catalogue, createLogger(config.logLevel), opts.roles, {
        demo: opts.demo === true,
      });
      // Exit now: a client that never let go (a half-open connection at the deadline) must not
      // keep the process alive past the orchestrator's grace period.
      process.exit(code);
    });

  program
    .command('migrate')
    .description('apply the database migrations (idempotent)')
    .option('--down', 'roll back every migration instead')
    .action(async (opts: { down?: boolean }) => {
      const config = loadConfig(process.env, { uses: needsOf(['migrate']) });
      await migrate(config, createLogger(config.logLevel), { down: opts.down === true });
    });

  program
    .command('topics')
    .description('topics declared in the topology file')
    .command('apply')
    .description('create missing topics, report drift and what a topology change implies (idempotent)')
    .option('--grow-partitions', 'add the partitions a topic declares beyond what it has (a shard or partition count raised)')
    .action(async (opts: { growPartitions?: boolean }) => {
      const config = loadConfig(process.env, { uses: needsOf(['topics', 'apply']) });
      const catalogue = loadEntities(config.entitiesPath);
      const drift = await topicsApply(config, loadTopology(config.topologyPath, catalogue), catalogue, createLogger(config.logLevel), {
        growPartitions: opts.growPartitions === true,
      });
      if (drift > 0) process.exitCode = 3;
    });

  program
    .command('schemas')
    .description('the Avro schemas of the events')
    .command('register')
    .description('register every event schema with the registry and save the ids `run` reads (idempotent; a deployment step)')
    .action(async () => {
      const config = loadConfig(process.env, { uses: needsOf(['schemas', 'register']) });
      const catalogue = loadEntities(config.entitiesPath);
      await schemasRegister(config, loadTopology(config.topologyPath, catalogue), catalogue, createLogger(config.logLevel));
    });

  program
    .command('cdc-tail')
    .description('print CDC events of the mapped tables as they arrive (Ctrl-C stops)')
    .option('--seconds <n>', 'stop after n seconds', (v) => Number.parseInt(v, 10))
    .action(async (opts: { seconds?: number }) => {
      const config = loadConfig(process.env, { uses: needsOf(['cdc-tail']) });
      await cdcTail(config, loadEntities(config.entitiesPath), createLogger(config.logLevel), { seconds: opts.seconds });
    });

  registerBackfillCommand(program);
  registerReplayCommands(program);
  registerCtlCommands(program);
  registerConnectorCommands(program);
  registerCheckCommand(program);
  registerSqlCommands(program);
  registerForecastCommand(program);
  registerExplainCommand(program);

  await program.parseAsync(argv);
}

const EX_USAGE = 64;
const EX_CONFIG = 78;

main(process.argv).catch((err: unknown) => {
  // Commander has printed its message (or the help, or the version) already.
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : EX_USAGE);
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  const hint = failureHint(err);
  if (hint !== undefined) console.error(`hint: ${hint}`);
  process.exit(err instanceof ConfigError ? EX_CONFIG : 1);
});
