/**
 * Which of this process's databases answer, asked every few seconds, and the start-up check of
 * the ones that did not answer at start.
 *
 * A database that does not answer at start (refused, or silent past the connect timeout) does
 * not stop the process: it serves the databases that answer, and the watch reads the missing
 * one's tables and checks them against the entities file once it answers. Until then its
 * batches are refused as retriable (`holdUntilChecked`), so its entries wait in their partitions
 * (its breaker opens, the hold stages' in-memory caps pause the partitions) and nothing of it
 * is parked: a batch run on tables nobody checked could fail on every row. A table that turns
 * out not to match is a ConfigError: the watch is FAILED and the process exits, as it would
 * have at start. A first pass refused there is held like one refused at start (db/first-pass-holds.ts):
 * the hold is in place before the database counts as checked, so no batch of it runs before.
 *
 * The ping is a `SELECT 1` given PING_DEADLINE_MS: a frozen server is "not answering" then,
 * not after the statement deadline. A ping still in flight is not sent again, so a silent
 * server costs one pooled connection (until its statement deadline destroys it), not one a tick.
 */
import type { Knex } from 'knex';
import type { EntityCatalogue, Location, Transition } from '../core/entity-catalogue';
import { entityOf, locationOf } from '../core/entity-catalogue';
import type { TableInfo } from '../core/column-info';
import { TimebucketError } from '../core/errors';
import { checkDatabaseSchema } from './check-entity-schema';
import type { FirstPassLimits } from '../core/first-pass-guard';
import type { FirstPassHolds } from './first-pass-holds';
import type { Logger } from '../ops/logger';
import { PollLoop } from '../runtime/poll-loop';

/** How long a ping may take before the database counts as not answering. */
const PING_DEADLINE_MS = 5_000;

export type DatabaseState = Readonly<{
  /** Whether its last ping (or the start-up read) was answered. */
  answering: boolean;
  /** Its tables checked against the entities file (at start, or since by the watch). */
  checked: boolean;
  /** When `answering` last changed (ms since epoch). */
  sinceMs: number;
  /** Why it is not answering, when it is not. */
  error?: string;
}>;

export type DatabaseWatchOptions = Readonly<{
  pools: Readonly<Record<string, Knex>>;
  catalogue: EntityCatalogue;
  schemaNames: Readonly<Record<string, string>>;
  /** Filled at start with the tables of the databases that answered; the watch adds the others'. */
  schema: Map<string, TableInfo>;
  /** The databases whose tables could not be read at start. */
  unchecked: readonly string[];
  /** The unchecked databases' errors at start, by name. */
  startErrors?: Readonly<Record<string, string>>;
  intervalMs: number;
  /** config.firstPass, for the data check of a database that answers late (db/check-entity-data.ts). */
  firstPass?: FirstPassLimits;
  /** Where the transitions whose first pass a late check refuses are held. */
  holds?: Pick<FirstPassHolds, 'add'>;
  logger: Logger;
  now?: () => number;
  onState?: (database: string, state: DatabaseState) => void;
}>;

export class DatabaseWatch {
  private readonly states = new Map<string, DatabaseState>();
  private readonly pinging = new Set<string>();
  /** The watch's component: pings every interval, FAILED on a table that does not match. */
  readonly loop: PollLoop;
  private readonly now: () => number;

  constructor(private readonly opts: DatabaseWatchOptions) {
    this.now = opts.now ?? Date.now;
    for (const name of Object.keys(opts.pools)) {
      const unchecked = opts.unchecked.includes(name);
      this.set(name, {
        answering: !unchecked,
        checked: !unchecked,
        sinceMs: this.now(),
        ...(unchecked && { error: opts.startErrors?.[name] ?? 'did not answer at start' }),
      });
    }
    this.loop = new PollLoop({
      name: 'database watch',
      tick: () => this.tick(),
      intervalMs: opts.intervalMs,
      backoff: { baseMs: opts.intervalMs, maxMs: opts.intervalMs },
      // A table that does not match is a ConfigError: the second in a row fails the process.
      deterministicAttempts: 2,
      stopDeadlineMs: PING_DEADLINE_MS + 1_000,
      logger: opts.logger,
    });
  }

  /** Every database by name. */
  snapshot(): Readonly<Record<string, DatabaseState>> {
    return Object.fromEntries(this.states);
  }

  isChecked(database: string): boolean {
    return this.states.get(database)?.checked === true;
  }

  private set(name: string, state: DatabaseState): void {
    this.states.set(name, state);
    this.opts.onState?.(name, state);
  }

  private async tick(): Promise<void> {
    await Promise.all(Object.keys(this.opts.pools).map((name) => this.ping(name)));
    // The tables of a database that answers again, checked before its batches run.
    for (const [name, state] of this.states) {
      if (state.checked || !state.answering) continue;
      const held = await checkDatabaseSchema(this.opts.pools, this.opts.catalogue, this.opts.schemaNames, this.opts.schema, name, this.opts.firstPass);
      this.opts.holds?.add(held);
      if (held.length > 0) this.opts.logger.error({ database: name, held: held.map((h) => h.problem) }, 'first pass refused: those transitions are held');
      this.set(name, { ...state, checked: true });
      this.opts.logger.info({ database: name }, 'database answers: its tables are checked, its batches run');
    }
  }

  private async ping(name: string): Promise<void> {
    if (this.pinging.has(name)) return;
    this.pinging.add(name);
    const ping = this.opts.pools[name]!.raw('SELECT 1').then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    void ping.finally(() => this.pinging.delete(name));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no answer within ${PING_DEADLINE_MS} ms`), PING_DEADLINE_MS)));
    const error = await Promise.race([ping, late]).finally(() => clearTimeout(timer));
    const before = this.states.get(name)!;
    const answering = error === undefined;
    if (answering === before.answering && error === before.error) return;
    if (answering !== before.answering)
      this.opts.logger[answering ? 'info' : 'warn'](
        { database: name, ...(error !== undefined && { error }) },
        answering ? 'database answers again' : 'database does not answer',
      );
    this.set(name, {
      checked: before.checked,
      answering,
      sinceMs: answering === before.answering ? before.sinceMs : this.now(),
      ...(error !== undefined && { error }),
    });
  }
}

type Runs<R> = Readonly<{ run: (transition: Transition, entries: never, path: never, location?: Location) => Promise<R> }>;

/**
 * `batches` refusing, as retriable, the batches of a database whose tables are not checked yet
 * (the watch checks them once it answers).
 */
export function holdUntilChecked<B extends Runs<unknown>>(batches: B, catalogue: EntityCatalogue, watch: Pick<DatabaseWatch, 'isChecked'>): B {
  return {
    ...batches,
    run: (async (transition: Transition, entries: never, path: never, location?: Location) => {
      const database = (location ?? locationOf(entityOf(catalogue, transition.entity), undefined)).database;
      if (!watch.isChecked(database)) {
        throw new TimebucketError(
          'DATABASE_UNCHECKED',
          `database '${database}' has not answered since start: its tables are checked, and its batches run, once it does`,
          { retriable: true },
        );
      }
      return batches.run(transition, entries, path, location);
    }) as B['run'],
  };
}
