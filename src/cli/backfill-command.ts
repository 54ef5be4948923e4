/**
 * timebucket backfill [--entity coupon|order] [--since <ISO>] [--until <ISO>] [--page-size N] [--json]
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { DateTime } from 'luxon';
import { loadConfig } from '../config';
import { loadTopology } from '../ops/load-topology';
import { createCommandLogger } from '../ops/logger';
import type { EntityType } from '../core/bucket-entry';
import { runBackfill } from './backfill';

export function registerBackfillCommand(program: Command): void {
  program
    .command('backfill')
    .description('schedule the expirable rows already in the database (idempotent; run after the repartitioner is ready)')
    .addOption(new Option('--entity <entity>', 'only this entity').choices(['coupon', 'order']))
    .option('--since <iso>', 'only rows expiring at or after this time (any ISO zone)', isoTime)
    .option('--until <iso>', 'only rows expiring before this time (any ISO zone)', isoTime)
    .option('--page-size <n>', 'rows per database page and per append', positiveInt, 1_000)
    .option('--json', 'print the summary as one JSON line')
    .action(async (opts: { entity?: EntityType; since?: Date; until?: Date; pageSize: number; json?: boolean }) => {
      const config = loadConfig(process.env);
      const entities: EntityType[] = opts.entity === undefined ? ['coupon', 'order'] : [opts.entity];
      const complete = await runBackfill(config, loadTopology(config.topologyPath), createCommandLogger(config.logLevel), {
        entities,
        window: { ...(opts.since && { since: opts.since }), ...(opts.until && { until: opts.until }) },
        pageSize: opts.pageSize,
        json: opts.json === true,
      });
      // Interrupted: the summary says where to resume; 130 like any interrupted command.
      if (!complete) process.exitCode = 130;
    });
}

/** An ISO 8601 time in any zone (an offset or Z; a time without one is read as UTC). */
export function isoTime(value: string): Date {
  const t = DateTime.fromISO(value, { zone: 'utc', setZone: true });
  if (!t.isValid) throw new InvalidArgumentError(`not an ISO 8601 time (${t.invalidExplanation ?? t.invalidReason}): e.g. 2026-12-01T10:00:00Z`);
  return t.toJSDate();
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}
