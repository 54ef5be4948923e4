/** The `timebucket` command tree (main.ts runs it): each command with its options and its action. */
import { InvalidArgumentError } from 'commander';
import { ConfigParts } from '../config';
import { packageVersion } from '../ops/package-root';
import { SetupCommand } from './command-setup';
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

/** Every command of `timebucket`, each with its options and what it needs, read from `env` before its action. */
export function timebucketProgram(env: NodeJS.ProcessEnv): SetupCommand {
  const program = new SetupCommand('timebucket')
    .description('time-driven state transitions over Kafka time-bucket rings')
    .version(packageVersion(), '--version', 'print the version and exit')
    .showHelpAfterError()
    // Usage errors are thrown (every subcommand inherits this), so they get their own exit code.
    .exitOverride()
    .loadNeedsBeforeActions(env);

  registerRunCommand(program);
  registerDeploymentSteps(program);
  registerCdcTailCommand(program);
  registerBackfillCommand(program);
  registerReplayCommands(program);
  registerCtlCommands(program);
  registerConnectorCommands(program);
  registerCheckCommand(program);
  registerSqlCommands(program);
  registerForecastCommand(program);
  registerExplainCommand(program);
  return program;
}

function registerRunCommand(program: SetupCommand): void {
  program
    .command('run')
    .description('run timebucket roles until SIGINT/SIGTERM')
    .option('--roles <list>', `comma-separated roles (${Roles.join(', ')})`, parseRoles, [...Roles])
    .option('--demo', 'also feed a small demo workload and print a live summary')
    .actionWith({ uses: ConfigParts, logTo: 'stdout' }, async ({ config, topology, catalogue, logger }, opts: { roles: Role[]; demo?: boolean }) => {
      const code = await run(config, topology, catalogue, logger, opts.roles, { demo: opts.demo === true });
      // Exit now: a client that never let go (a half-open connection at the deadline) must not
      // keep the process alive past the orchestrator's grace period.
      process.exit(code);
    });
}

/** What a deployment runs before the service: its tables, its topics, its schemas. */
function registerDeploymentSteps(program: SetupCommand): void {
  program
    .command('migrate')
    .description('apply the database migrations (idempotent)')
    .option('--down', 'roll back every migration instead')
    // The grants follow the entities file.
    .actionWith({ uses: ['db', 'entities'], logTo: 'stdout' }, async ({ config, catalogue, logger }, opts: { down?: boolean }) => {
      await migrate(config, catalogue, logger, { down: opts.down === true });
    });

  program
    .command('topics')
    .description('topics declared in the topology file')
    .command('apply')
    .description('create missing topics, report drift and what a topology change implies (idempotent)')
    .option('--grow-partitions', 'add the partitions a topic declares beyond what it has (a shard or partition count raised)')
    // The CDC topics are the mapped tables'.
    .actionWith(
      { uses: ['kafka', 'topology', 'entities'], logTo: 'stdout' },
      async ({ config, topology, catalogue, logger }, opts: { growPartitions?: boolean }) => {
        const drift = await topicsApply(config, topology, catalogue, logger, { growPartitions: opts.growPartitions === true });
        if (drift > 0) process.exitCode = 3;
      },
    );

  program
    .command('schemas')
    .description('the Avro schemas of the events')
    .command('register')
    .description('register every event schema with the registry and save the ids `run` reads (idempotent; a deployment step)')
    // The ids are saved on the main database; derived schemas read their tables' columns.
    .actionWith({ uses: ['db', 'registry', 'topology', 'entities'], logTo: 'stdout' }, async ({ config, topology, catalogue, logger }) => {
      await schemasRegister(config, topology, catalogue, logger);
    });
}

function registerCdcTailCommand(program: SetupCommand): void {
  program
    .command('cdc-tail')
    .description('print CDC events of the mapped tables as they arrive (Ctrl-C stops)')
    .option('--seconds <n>', 'stop after n seconds', (v) => Number.parseInt(v, 10))
    .actionWith({ uses: ['kafka', 'entities'], logTo: 'stdout' }, async ({ config, catalogue, logger }, opts: { seconds?: number }) => {
      await cdcTail(config, catalogue, logger, { seconds: opts.seconds });
    });
}
