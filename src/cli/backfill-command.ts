/**
 * timebucket backfill [--entity coupon|order] [--since <ISO>] [--until <ISO>] [--page-size N] [--json]
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../config';
import { loadTopology } from '../ops/load-topology';
import { createCommandLogger } from '../ops/logger';
import type { EntityType } from '../core/bucket-entry';
import { runBackfill } from './backfill';
import { isoTimeArg, positiveIntArg } from './options';

export function registerBackfillCommand(program: Command): void {
  program
    .command('backfill')
    .description('schedule the expirable rows already in the database (idempotent; run after the repartitioner is ready)')
    .addOption(new Option('--entity <entity>', 'only this entity').choices(['coupon', 'order']))
    .option('--since <iso>', 'only rows expiring at or after this time (ISO-8601, any zone; none: UTC)', isoTimeArg)
    .option('--until <iso>', 'only rows expiring before this time (ISO-8601, any zone; none: UTC)', isoTimeArg)
    .option('--page-size <n>', 'rows per database page and per append', positiveIntArg, 1_000)
    .option('--json', 'print the summary as one JSON line')
    .action(async (opts: { entity?: EntityType; since?: number; until?: number; pageSize: number; json?: boolean }) => {
      const config = loadConfig(process.env);
      const entities: EntityType[] = opts.entity === undefined ? ['coupon', 'order'] : [opts.entity];
      const complete = await runBackfill(config, loadTopology(config.topologyPath), createCommandLogger(config.logLevel), {
        entities,
        window: { ...(opts.since !== undefined && { since: new Date(opts.since) }), ...(opts.until !== undefined && { until: new Date(opts.until) }) },
        pageSize: opts.pageSize,
        json: opts.json === true,
      });
      // Interrupted: the summary says where to resume; 130 like any interrupted command.
      if (!complete) process.exitCode = 130;
    });
}
