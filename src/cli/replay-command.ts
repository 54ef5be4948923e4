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
import { ConfigParts } from '../config';
import type { SetupCommand } from './command-setup';
import { interruptible } from './interrupt';
import { entityNames } from '../core/entity-catalogue';
import { isoTimeArg, shardArg } from './options';
import { offsetsResetCommand } from './offsets-reset';
import { replayCommand } from './replay-run';

const atOption = () => new Option('--at <time>', 'a time inside the bucket, ISO-8601 in any zone (no zone: UTC)').argParser(isoTimeArg).makeOptionMandatory();
const tierOption = () => new Option('--tier <name|index>', 'the tier, by name or index (default: the finest, 0)');

type ReplayFlags = { at: number; tier?: string; entity?: string; shard?: number; dryRun?: boolean; json?: boolean };

/** Logs on stderr: stdout carries only the result (parseable with --json). */
export function registerReplayCommands(program: SetupCommand): void {
  registerReplay(program);
  registerOffsetsReset(program);
}

function registerReplay(program: SetupCommand): void {
  program
    .command('replay')
    .description("re-run one ring bucket's entries through the expiry transactions (path replay) beside the live expirer, then exit")
    .addOption(atOption())
    .addOption(tierOption())
    .addOption(new Option('--entity <name>', 'only entries of this entity (an entity of the entities file)'))
    .addOption(new Option('--shard <n>', "only this shard's entries (reads its partition alone)").argParser(shardArg))
    .option('--dry-run', 'report what the entries would do against the database, changing nothing')
    .option('--json', 'print the summary as one JSON object')
    // It runs the expiry transactions and writes their events (encoded, with the saved schema
    // ids: the registry's URL names them), so it needs every part, as `run` does.
    .actionWith({ uses: ConfigParts, logTo: 'stderr' }, async ({ config, topology, catalogue, logger }, opts: ReplayFlags, cmd: Command) => {
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
}

function registerOffsetsReset(program: SetupCommand): void {
  program
    .command('offsets')
    .description("the live stages' consumer-group offsets")
    .command('reset')
    .description("move the live group's offsets on a bucket's ring topic back to the bucket's first record (the group must be stopped)")
    .addOption(atOption())
    .addOption(tierOption())
    .option('--dry-run', 'print what would be done, changing nothing')
    .option('--json', 'print the result as one JSON object')
    // Reads the bucket from its ring topic and moves the live group; no database.
    .actionWith(
      { uses: ['kafka', 'topology', 'entities'], logTo: 'stderr' },
      async ({ config, topology, catalogue, logger }, opts: Omit<ReplayFlags, 'entity' | 'shard'>) => {
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
      },
    );
}
