/**
 * Operator commands for re-running a ring bucket:
 *   timebucket replay --at <time> [--tier t] [--entity e] [--shard n] [--dry-run] [--json]
 *       re-run exactly that bucket's entries through the expiry transactions (path = replay)
 *       with a one-off reader, beside the live expirer; or, with --dry-run, report against the
 *       database what they would do, changing nothing
 *   timebucket offsets reset --at <time> [--tier t] [--dry-run] [--json]
 *       move the live group's offsets on the bucket's ring topic back to the bucket's first
 *       record (the group must have no members), and print the stock-tool equivalent
 * `--at` is ISO-8601 in any zone (no zone: UTC); everything printed is UTC.
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../config';
import type { EntityType } from '../core/bucket-entry';
import { createCommandLogger } from '../ops/logger';
import { loadTopology } from '../ops/load-topology';
import { isoTimeArg, shardArg } from './options';
import { offsetsResetCommand } from './offsets-reset';
import { replayCommand } from './replay-run';

/** Logs on stderr: stdout carries only the result (parseable with --json). */
function setUp() {
  const config = loadConfig(process.env);
  return { config, topology: loadTopology(config.topologyPath), logger: createCommandLogger(config.logLevel) };
}

const atOption = () => new Option('--at <time>', 'a time inside the bucket, ISO-8601 in any zone (no zone: UTC)').argParser(isoTimeArg).makeOptionMandatory();
const tierOption = () => new Option('--tier <name|index>', 'the tier, by name or index (default: the finest, 0)');

export function registerReplayCommands(program: Command): void {
  program
    .command('replay')
    .description("re-run one ring bucket's entries through the expiry transactions (path replay) beside the live expirer, then exit")
    .addOption(atOption())
    .addOption(tierOption())
    .addOption(new Option('--entity <entity>', 'only entries of this entity').choices(['coupon', 'order']))
    .addOption(new Option('--shard <n>', "only this shard's entries (reads its partition alone)").argParser(shardArg))
    .option('--dry-run', 'report what the entries would do against the database, changing nothing')
    .option('--json', 'print the summary as one JSON object')
    .action(async (opts: { at: number; tier?: string; entity?: EntityType; shard?: number; dryRun?: boolean; json?: boolean }) => {
      const { config, topology, logger } = setUp();
      await replayCommand(config, topology, logger, { atMs: opts.at, tier: opts.tier, entity: opts.entity, shard: opts.shard, dryRun: opts.dryRun === true, json: opts.json === true });
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
      const { config, topology, logger } = setUp();
      const { exitCode } = await offsetsResetCommand(config, topology, logger, { atMs: opts.at, tier: opts.tier, dryRun: opts.dryRun === true, json: opts.json === true });
      process.exitCode = exitCode;
    });
}
