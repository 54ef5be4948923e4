/**
 * `timebucket backfill`: reads the rows in a transition's from-states and routes them into the
 * rings (see reconcile/backfill.ts for why and when). A progress bar per transition (rows read
 * and routed, rate, ETA) on a terminal; a log line every few seconds otherwise. SIGINT/SIGTERM
 * stop after the page in flight, and the summary gives the commands that finish the run
 * (cli/backfill-resume.ts).
 */
import { Partitioners } from 'kafkajs';
import type { Config } from '../config';
import { entityOf, type EntityCatalogue, type Transition } from '../core/entity-catalogue';
import { systemClock } from '../core/clock';
import type { Topology } from '../core/topology';
import { openDatabases } from '../db/databases';
import { createGuardedProducer } from '../kafka/guarded-producer';
import { RetryPolicies } from '../runtime/retry-policy';
import { retry } from '../runtime/retry';
import { createKafka } from '../kafka/client';
import { appendBudgetMs, sendRouted } from '../kafka/send-routed';
import type { Logger } from '../ops/logger';
import { backfill, BackfillResult } from '../reconcile/backfill';
import { expirableReads, TimeWindow } from '../reconcile/sql/read-expirable-page';
import { formatUtc } from '../core/utc-time';
import { resumeHint } from './backfill-resume';
import { InterruptedError } from '../core/errors';
import { commandProgress } from './progress';

export type BackfillCommand = Readonly<{ transitions: readonly Transition[]; window: TimeWindow; pageSize: number; json: boolean }>;

/**
 * Routes every row of the window. `stop`: aborted by Ctrl-C or SIGTERM (cli/interrupt.ts), the
 * run ends after the page in flight, prints how to finish and throws InterruptedError.
 */
export async function runBackfill(
  config: Config,
  topology: Topology,
  catalogue: EntityCatalogue,
  logger: Logger,
  cmd: BackfillCommand,
  stop?: AbortSignal,
): Promise<void> {
  const dbs = openDatabases(config, catalogue, logger);
  // Guarded like the service's: a send kafkajs resolved without writing all of it counts as failed
  // (kafka/acknowledged.ts) and the page is sent again, like after any retriable failure, a few
  // times (an operator's command ends on a long outage; run it again, it is idempotent).
  const kafka = createKafka(config.kafka, logger, '-backfill');
  const producer = createGuardedProducer(
    () => kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner }),
    {
      breaker: 'backfill-producer',
      logger,
    },
  );
  // One reader per transition and table, on the table's database.
  const reads = new Map(
    cmd.transitions.flatMap((t) => {
      const entity = entityOf(catalogue, t.entity);
      return entity.locations.map((l) => [`${t.ref}@${l.key}`, expirableReads(dbs.pools[l.database]!, entity, t, l)] as const);
    }),
  );
  const readsOf = (t: Transition) => entityOf(catalogue, t.entity).locations.map((l) => reads.get(`${t.ref}@${l.key}`)!);
  const progress = commandProgress({ line: '{value}/{total} read, {routed} routed | ETA {eta_formatted}', logger, interactive: !cmd.json });
  const width = Math.max(...cmd.transitions.map((t) => t.ref.length));
  try {
    await producer.connect();
    const routing = { producer, topology, catalogue, clock: systemClock, appendBudgetMs: appendBudgetMs(topology), logger };
    const result = await backfill({
      catalogue,
      transitions: cmd.transitions,
      window: cmd.window,
      pageSize: cmd.pageSize,
      count: async (t, window) => (await Promise.all(readsOf(t).map((r) => r.count(window)))).reduce((a, b) => a + b, 0),
      readPage: (t, location, from, window, cursor, limit) => reads.get(`${t.ref}@${location.key}`)!.readPage(from, window, cursor, limit),
      route: async (entries) => {
        const records = await retry(() => sendRouted(routing, entries), { policy: RetryPolicies.replay, what: 'routing a backfill page', logger });
        return { due: records.filter((r) => r.headers['bucket_start'] === undefined).length };
      },
      now: () => systemClock.now(),
      onStart: (t, total) => progress.start(t.ref.padEnd(width), total),
      onProgress: (p) => progress.update(p.read, { routed: p.routed, due: p.due }, p.total),
      stopRequested: () => stop?.aborted === true,
    });
    progress.stop();
    printSummary(result, cmd);
    if (!result.complete) throw new InterruptedError('the backfill', 'the commands above finish it');
  } finally {
    progress.stop();
    await producer.disconnect().catch(() => undefined);
    await dbs.destroy();
  }
}

function printSummary(result: BackfillResult, cmd: BackfillCommand): void {
  const resume = resumeHint(result, cmd.window);
  if (cmd.json) {
    // `entities`: one item per transition (the name kept for the scripts reading it).
    console.log(JSON.stringify({ complete: result.complete, entities: result.transitions, ...(resume && { resume }) }));
    return;
  }
  const window = `due in [${cmd.window.since ? formatUtc(cmd.window.since.getTime()) : '-∞'}, ${cmd.window.until ? formatUtc(cmd.window.until.getTime()) : '+∞'})`;
  for (const p of result.transitions) {
    const reminders = p.reminders > 0 ? `, ${p.reminders} reminders scheduled` : '';
    console.log(
      `${p.entity}.${p.transition}: ${p.read} read, ${p.routed} routed (${p.due} to the due lane, ${p.routed - p.due} into rings)${reminders}, ${window}`,
    );
  }
  if (resume === undefined) return;
  const [first, ...rest] = resume.commands;
  console.log(`interrupted: resume with ${first}`);
  for (const args of rest) console.log(`  then (not started): ${args}`);
}
