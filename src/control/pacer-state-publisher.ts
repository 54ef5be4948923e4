/**
 * Publishes this process's pacers (hold/database-pacing.ts, one per database) to pacer_state
 * every few seconds, so `timebucket ctl status` shows them beside the switches; deletes its rows
 * when it stops. Best effort: a write that fails (the table not migrated yet, the database away)
 * is logged at debug and tried at the next tick; it never fails the process, whose work it only
 * describes.
 */
import type { Knex } from 'knex';
import type { PacerView } from '../core/pacer';
import type { Logger } from '../ops/logger';
import { group, resource, type Group } from '../runtime/group';
import { PollLoop } from '../runtime/poll-loop';
import { deletePacerStates, writePacerStates, type PacerStateRow } from './sql/pacer-state-store';

export type PacerStatePublisherOptions = Readonly<{
  db: Knex;
  /** The deployment: TB_GROUP_PREFIX, as the switches'. */
  scope: string;
  instance: string;
  views: () => ReadonlyMap<string, PacerView>;
  intervalMs: number;
  logger: Logger;
}>;

export function pacerStatePublisher(opts: PacerStatePublisherOptions): Group {
  const publish = async () => {
    try {
      await writePacerStates(opts.db, opts.scope, opts.instance, rowsOf(opts.views()));
    } catch (err) {
      opts.logger.debug({ err }, 'could not publish the pacers state for ctl status; trying again');
    }
  };
  const loop = new PollLoop({
    name: 'pacer state',
    tick: publish,
    intervalMs: opts.intervalMs,
    backoff: { baseMs: opts.intervalMs, maxMs: opts.intervalMs },
    logger: opts.logger,
  });
  // Stopped in reverse: the loop, then the rows it wrote.
  return group('pacer state', {
    rows: resource(() =>
      deletePacerStates(opts.db, opts.scope, opts.instance).catch((err: unknown) => opts.logger.debug({ err }, 'could not delete the pacers state')),
    ),
    loop,
  });
}

export function rowsOf(views: ReadonlyMap<string, PacerView>): PacerStateRow[] {
  return [...views].map(([database, v]) => ({
    database,
    rate: v.rate,
    healthRate: v.healthRate,
    budgetRate: v.budgetRate,
    state: v.state,
    limitedBy: v.limitedBy ?? null,
    budgetUsed: v.budgetUsed,
  }));
}
