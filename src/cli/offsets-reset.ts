/**
 * `timebucket offsets reset`: the live hold group's offsets on a bucket's ring topic back to the
 * bucket's first record, so the live stage re-reads the bucket. Refuses (exit 4) while the
 * group has members.
 */
import type { Config } from '../config';
import { systemClock, type Clock } from '../core/clock';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { Topology } from '../core/topology';
import { createKafka } from '../kafka/client';
import type { Logger } from '../ops/logger';
import { resetOffsetsToBucket, type OffsetsResetResult } from '../replay/bucket-offsets-reset';
import { bucketWindow, resolveTier } from '../replay/bucket-window';
import { offsetsResetJson, offsetsResetLines } from './replay-output';

/** The group has members: stop the stage, then run the reset again. */
export const OFFSETS_RESET_REFUSED = 4;
/** Some partitions did not read back at their target after the reset: run it again. */
export const OFFSETS_RESET_INCOMPLETE = 5;

export type OffsetsResetCliOptions = Readonly<{ atMs: number; tier?: string; dryRun: boolean; json: boolean }>;

/** Where the results go (stdout, the refusal on stderr) and the clock: replaced in tests. */
export type OffsetsResetIo = Readonly<{ print: (line: string) => void; printError: (line: string) => void; clock: Clock; signal: AbortSignal }>;

export async function offsetsResetCommand(
  config: Config,
  topology: Topology,
  catalogue: EntityCatalogue,
  logger: Logger,
  opts: OffsetsResetCliOptions,
  io: Partial<OffsetsResetIo> = {},
): Promise<{ result: OffsetsResetResult; exitCode: number }> {
  const print = io.print ?? console.log;
  const printError = io.printError ?? console.error;
  const window = bucketWindow(topology, resolveTier(topology, opts.tier), opts.atMs);
  const result = await resetOffsetsToBucket({
    kafka: createKafka(config.kafka, logger, '-offsets-reset'),
    topology,
    catalogue,
    groupPrefix: config.groupPrefix,
    window,
    dryRun: opts.dryRun,
    clock: io.clock ?? systemClock,
    logger,
    ...(io.signal && { signal: io.signal }),
  });
  if (result.refused) {
    printError(
      `refused: group ${result.group} has ${result.members.length} member(s) (${result.members.join(', ')}); ` +
        'its offsets can only be moved while no member is running: stop that stage (scale it to zero), run this again, then start it',
    );
    if (opts.json) print(JSON.stringify(offsetsResetJson(result, opts.dryRun, config.kafka.brokers)));
    return { result, exitCode: OFFSETS_RESET_REFUSED };
  }
  if (opts.json) print(JSON.stringify(offsetsResetJson(result, opts.dryRun, config.kafka.brokers)));
  else for (const line of offsetsResetLines(result, opts.dryRun, config.kafka.brokers)) print(line);
  return { result, exitCode: result.unmoved.length > 0 ? OFFSETS_RESET_INCOMPLETE : 0 };
}
