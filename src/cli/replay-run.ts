/** `timebucket replay`: one bucket's entries through the expiry transactions, then a summary. */
import type { Config } from '../config';
import { systemClock, type Clock } from '../core/clock';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { Topology } from '../core/topology';
import { openDatabases } from '../db/databases';
import { createReminderBatches } from '../expire/reminder-batch';
import { createTransitionBatches } from '../expire/transition-batch';
import { readEntitySchema } from '../db/check-entity-schema';
import { openOutboxWriter, type OpenedOutboxWriter } from '../publish/open-outbox-writer';
import { createKafka } from '../kafka/client';
import type { Logger } from '../ops/logger';
import { bucketWindow, resolveTier } from '../replay/bucket-window';
import { replayBucket, type ReplaySummary } from '../replay/replay-bucket';
import { replayJson, replayLines } from './replay-output';
import { commandProgress, type CommandProgress } from './progress';

export type ReplayCliOptions = Readonly<{ atMs: number; tier?: string; entity?: string; shard?: number; dryRun: boolean; json: boolean }>;

/** Where the results go (stdout, progress on stderr) and the clock: replaced in tests. */
export type ReplayIo = Readonly<{ print: (line: string) => void; progress: CommandProgress; clock: Clock; signal: AbortSignal }>;

export async function replayCommand(
  config: Config,
  topology: Topology,
  catalogue: EntityCatalogue,
  logger: Logger,
  opts: ReplayCliOptions,
  io: Partial<ReplayIo> = {},
): Promise<ReplaySummary> {
  const print = io.print ?? console.log;
  const clock = io.clock ?? systemClock;
  const line = `{value} entries, ${opts.dryRun ? '{due} due' : '{transitioned} transitioned'}, {alreadyDone} already done, {notDue} not due, {stale} stale`;
  const progress = io.progress ?? commandProgress({ line, logger, interactive: !opts.json });
  progress.start('replay', undefined);
  const window = bucketWindow(topology, resolveTier(topology, opts.tier), opts.atMs);
  const databases = openDatabases(config, catalogue, logger);
  let outbox: OpenedOutboxWriter | undefined;
  try {
    // Replayed transitions write their events encoded, as the expirer does.
    const tables = await readEntitySchema(databases.pools, catalogue);
    outbox = await openOutboxWriter({ config, catalogue, topology, tables, db: databases.main, logger });
    const summary = await replayBucket({
      kafka: createKafka(config.kafka, logger, '-replay'),
      dbs: databases.pools,
      catalogue,
      batches: createTransitionBatches(databases.pools, catalogue, { outbox: outbox.writer }),
      reminders: createReminderBatches(databases.pools, catalogue, { outbox: outbox.writer }),
      topology,
      groupPrefix: config.groupPrefix,
      window,
      entity: opts.entity,
      shard: opts.shard,
      dryRun: opts.dryRun,
      batchSize: config.expirer.batchSize,
      clock,
      logger,
      onProgress: (c) => progress.update(c.entries, c),
      ...(io.signal && { signal: io.signal }),
    });
    progress.stop();
    if (opts.json) print(JSON.stringify(replayJson(summary)));
    else for (const line of replayLines(summary)) print(line);
    return summary;
  } finally {
    progress.stop();
    await outbox?.stop();
    await databases.destroy();
  }
}
