/**
 * `timebucket backfill`: reads the expirable rows and routes them into the rings (see
 * reconcile/backfill.ts for why and when). A progress bar (rows read and routed, rate, ETA) on a
 * terminal; a log line every few seconds otherwise. SIGINT/SIGTERM stop after the page in
 * flight, and the summary gives the `--since` to resume from (re-routing a few rows twice is
 * harmless).
 */
import { Partitioners } from 'kafkajs';
import type { Config } from '../config';
import type { EntityType } from '../core/bucket-entry';
import { systemClock } from '../core/clock';
import type { Topology } from '../core/topology';
import { createDb } from '../db/knex';
import { createKafka } from '../kafka/client';
import { appendBudgetMs, sendRouted } from '../kafka/send-routed';
import type { Logger } from '../ops/logger';
import { backfill, BackfillResult } from '../reconcile/backfill';
import { countExpirable, readExpirablePage, TimeWindow } from '../reconcile/sql/read-expirable-page';
import { formatUtc } from '../core/utc-time';
import { commandProgress } from './progress';

export type BackfillCommand = Readonly<{ entities: readonly EntityType[]; window: TimeWindow; pageSize: number; json: boolean }>;

/** Returns whether the run completed (false: interrupted). */
export async function runBackfill(config: Config, topology: Topology, logger: Logger, cmd: BackfillCommand): Promise<boolean> {
  const db = createDb(config.db, { logger });
  const producer = createKafka(config.kafka, logger, '-backfill').producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  let stopping = false;
  const onSignal = () => (stopping = true);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = commandProgress({ line: '{value}/{total} read, {routed} routed | ETA {eta_formatted}', logger, interactive: !cmd.json });
  try {
    await producer.connect();
    const routing = { producer, topology, clock: systemClock, appendBudgetMs: appendBudgetMs(topology), logger };
    const result = await backfill({
      entities: cmd.entities,
      window: cmd.window,
      pageSize: cmd.pageSize,
      count: (entity, window) => countExpirable(db, entity, window),
      readPage: (entity, window, cursor, limit) => readExpirablePage(db, entity, window, cursor, limit),
      route: async (entries) => {
        const records = await sendRouted(routing, entries);
        return { due: records.filter((r) => r.headers['bucket_start'] === undefined).length };
      },
      onStart: (entity, total) => progress.start(entity.padEnd(6), total),
      onProgress: (p) => progress.update(p.read, { routed: p.routed, due: p.due }, p.total),
      stopRequested: () => stopping,
    });
    progress.stop();
    printSummary(result, cmd);
    return result.complete;
  } finally {
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await producer.disconnect().catch(() => undefined);
    await db.destroy();
  }
}

function printSummary(result: BackfillResult, cmd: BackfillCommand): void {
  const last = result.entities[result.entities.length - 1];
  const resumeSince = !result.complete && last?.lastExpireAtMs !== undefined ? formatUtc(last.lastExpireAtMs) : undefined;
  if (cmd.json) {
    console.log(JSON.stringify({ complete: result.complete, entities: result.entities, ...(resumeSince && { resume: { entity: last!.entity, since: resumeSince } }) }));
    return;
  }
  const window = `expire_time in [${cmd.window.since ? formatUtc(cmd.window.since.getTime()) : '-∞'}, ${cmd.window.until ? formatUtc(cmd.window.until.getTime()) : '+∞'})`;
  for (const p of result.entities) {
    console.log(`${p.entity}: ${p.read} read, ${p.routed} routed (${p.due} to the due lane, ${p.routed - p.due} into rings), ${window}`);
  }
  if (!result.complete) console.log(`interrupted: resume with --entity ${last?.entity ?? '?'}${resumeSince ? ` --since ${resumeSince}` : ''}`);
}
