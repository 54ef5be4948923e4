/**
 * `timebucket backfill`: reads the expirable rows and routes them into the rings (see
 * reconcile/backfill.ts for why and when). A progress bar (rows read and routed, rate, ETA) on a
 * terminal; a log line every few seconds otherwise. SIGINT/SIGTERM stop after the page in
 * flight, and the summary gives the `--since` to resume from (re-routing a few rows twice is
 * harmless).
 */
import { SingleBar, Presets } from 'cli-progress';
import { Partitioners } from 'kafkajs';
import { DateTime } from 'luxon';
import type { Config } from '../config';
import type { EntityType } from '../core/bucket-entry';
import { systemClock } from '../core/clock';
import type { Topology } from '../core/topology';
import { createDb } from '../db/knex';
import { createKafka } from '../kafka/client';
import { appendBudgetMs, sendRouted } from '../kafka/send-routed';
import type { Logger } from '../ops/logger';
import { backfill, BackfillProgress, BackfillResult } from '../reconcile/backfill';
import { countExpirable, readExpirablePage, TimeWindow } from '../reconcile/sql/read-expirable-page';

export type BackfillCommand = Readonly<{ entities: readonly EntityType[]; window: TimeWindow; pageSize: number; json: boolean }>;

const LOG_EVERY_MS = 5_000;

/** Returns whether the run completed (false: interrupted). */
export async function runBackfill(config: Config, topology: Topology, logger: Logger, cmd: BackfillCommand): Promise<boolean> {
  const db = createDb(config.db, { logger });
  const producer = createKafka(config.kafka, logger, '-backfill').producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  let stopping = false;
  const onSignal = () => (stopping = true);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = progressReporter(logger, cmd.json);
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
      onStart: progress.start,
      onProgress: progress.update,
      stopRequested: () => stopping,
    });
    progress.finish();
    printSummary(result, cmd);
    return result.complete;
  } finally {
    progress.finish();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await producer.disconnect().catch(() => undefined);
    await db.destroy();
  }
}

function progressReporter(logger: Logger, json: boolean) {
  const tty = process.stderr.isTTY === true && !json;
  let bar: SingleBar | undefined;
  let lastLogAt = 0;
  return {
    start(entity: EntityType, total: number) {
      if (tty) {
        bar = new SingleBar({ format: `${entity.padEnd(6)} |{bar}| {value}/{total} read, {routed} routed | {eta_formatted} left`, hideCursor: true }, Presets.shades_classic);
        bar.start(total, 0, { routed: 0 });
      } else {
        logger.info({ entity, total }, 'backfill started');
      }
    },
    update(p: BackfillProgress) {
      if (bar) {
        bar.setTotal(p.total);
        bar.update(p.read, { routed: p.routed });
      } else if (Date.now() - lastLogAt >= LOG_EVERY_MS) {
        lastLogAt = Date.now();
        logger.info({ entity: p.entity, read: p.read, routed: p.routed, total: p.total }, 'backfill progress');
      }
    },
    finish() {
      bar?.stop();
      bar = undefined;
    },
  };
}

function printSummary(result: BackfillResult, cmd: BackfillCommand): void {
  const last = result.entities[result.entities.length - 1];
  const resumeSince = !result.complete && last?.lastExpireAtMs !== undefined ? utc(last.lastExpireAtMs) : undefined;
  if (cmd.json) {
    console.log(JSON.stringify({ complete: result.complete, entities: result.entities, ...(resumeSince && { resume: { entity: last!.entity, since: resumeSince } }) }));
    return;
  }
  const window = `expire_time in [${cmd.window.since ? utc(cmd.window.since.getTime()) : '-∞'}, ${cmd.window.until ? utc(cmd.window.until.getTime()) : '+∞'})`;
  for (const p of result.entities) {
    console.log(`${p.entity}: ${p.read} read, ${p.routed} routed (${p.due} to the due lane, ${p.routed - p.due} into rings), ${window}`);
  }
  if (!result.complete) console.log(`interrupted: resume with --entity ${last?.entity ?? '?'}${resumeSince ? ` --since ${resumeSince}` : ''}`);
}

function utc(ms: number): string {
  return DateTime.fromMillis(ms, { zone: 'utc' }).toISO()!;
}
