/**
 * Operator commands for re-running a ring bucket:
 *   timebucket replay --at <time> [--tier t] [--entity e] [--shard n] [--dry-run] [--json]
 *       re-run exactly that bucket's entries through the expiry transactions (path = replay)
 *       with a one-off reader, beside the live expirer; or, with --dry-run, report against the
 *       database what they would do, changing nothing
 *   timebucket offsets reset --at <time> [--tier t] [--dry-run] [--json]
 *       move the live group's offsets on the bucket's ring topic back to the bucket's first
 *       record (the group must have no members), and print the stock-tool equivalent
 * `--at` is ISO-8601 in any zone (no zone: UTC); everything printed is UTC. `--entity` is a name
 * of the entities file (TB_ENTITIES), checked once the file is loaded.
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../config';
import { needsOf } from './command-needs';
import { interruptible } from './interrupt';
import { entityNames } from '../core/entity-catalogue';
import { createCommandLogger } from '../ops/logger';
import { loadEntities } from '../ops/load-entities';
import { loadTopology } from '../ops/load-topology';
import { isoTimeArg, shardArg } from './options';
import { offsetsResetCommand } from './offsets-reset';
import { replayCommand } from './replay-run';

/** Logs on stderr: stdout carries only the result (parseable with --json). */
function setUp(uses?: ReturnType<typeof needsOf>) {
  const config = loadConfig(process.env, uses === undefined ? {} : { uses });
  const catalogue = loadEntities(config.entitiesPath);
  return { config, topology: loadTopology(config.topologyPath, catalogue), catalogue, logger: createCommandLogger(config.logLevel) };
}

const atOption = () => new Option('--at <time>', 'a time inside the bucket, ISO-8601 in any zone (no zone: UTC)').argParser(isoTimeArg).makeOptionMandatory();
const tierOption = () => new Option('--tier <name|index>', 'the tier, by name or index (default: the finest, 0)');

export function registerReplayCommands(program: Command): void {
  program
    .command('replay')
    .description("re-run one ring bucket's entries through the expiry transactions (path replay) beside the live expirer, then exit")
    .addOption(atOption())
    .addOption(tierOption())
    .addOption(new Option('--entity <name>', 'only entries of this entity (an entity of the entities file)'))
    .addOption(new Option('--shard <n>', "only this shard's entries (reads its partition alone)").argParser(shardArg))
    .option('--dry-run', 'report what the entries would do against the database, changing nothing')
    .option('--json', 'print the summary as one JSON object')
    .action(async (opts: { at: number; tier?: string; entity?: string; shard?: number; dryRun?: boolean; json?: boolean }, cmd: Command) => {
      const { config, topology, catalogue, logger } = setUp();
      const names = entityNames(catalogue);
      if (opts.entity !== undefined && !names.includes(opts.entity)) {
        cmd.error(`error: option '--entity <name>' argument '${opts.entity}' is invalid. Allowed choices are ${names.join(', ')}.`);
      }
      await interruptible((signal) =>
        replayCommand(
          config,
          topology,
          catalogue,
          logger,
          { atMs: opts.at, tier: opts.tier, entity: opts.entity, shard: opts.shard, dryRun: opts.dryRun === true, json: opts.json === true },
          { signal },
        ),
      );
    });

  program
    .command('offsets')
    .description("the live stages' consumer-group offsets")
    .command('reset')
    .description("move the live group's offsets on a bucket's ring topic back to the bucket's first record (the group must be stopped)")
    .addOption(atOption())
    .addOption(tierOption())
    .option('--dry-run', 'print what would be done, changing nothing')
    .option('--json', 'print the result as one JSON object')
    .action(async (opts: { at: number; tier?: string; dryRun?: boolean; json?: boolean }) => {
      const { config, topology, catalogue, logger } = setUp(needsOf(['offsets', 'reset']));
      const outcome = await interruptible((signal) =>
        offsetsResetCommand(
          config,
          topology,
          catalogue,
          logger,
          { atMs: opts.at, tier: opts.tier, dryRun: opts.dryRun === true, json: opts.json === true },
          { signal },
        ),
      );
      if (outcome !== undefined) process.exitCode = outcome.exitCode;
    });
}
