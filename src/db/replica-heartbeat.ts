/**
 * Replica lag per database, sub-second, from a heartbeat row (as pt-heartbeat and gh-ost measure
 * it): for each database with a replica configured (TB_DB_REPLICA_*, config-replicas.ts), a writer
 * upserts this process's row of timebucket_heartbeat on the primary every intervalMs, and a reader
 * reads the row back on the replica as often. core/replica-lag.ts turns the beat the replica shows
 * into a lag on this process's own clock: no clock is compared with another's.
 *
 *   lagMs(database)   the lag of that database's replica as of the last read (at most an interval
 *                     ago); undefined when it has none, before a read follows the first beat, and
 *                     once the replica has not answered for staleAfterMs (its lag is then
 *                     unknown, not small)
 *
 * Both loops only pace (runtime/poll-loop.ts): a beat or a read that fails is logged when the
 * failures start and when they end, never thrown. A primary that is away is its breaker's and
 * the database watch's to report; a replica that is away shows as an unknown lag.
 */
import type { Clock } from '../core/clock';
import { HeartbeatLog } from '../core/replica-lag';
import { group, resource, type Group } from '../runtime/group';
import { PollLoop } from '../runtime/poll-loop';
import { Backoffs } from '../runtime/retry-policy';
import type { Logger } from '../ops/logger';
import type { DbConnection } from '../config';
import { createDb, type Db } from './knex';
import { readHeartbeat } from './sql/read-heartbeat';
import { writeHeartbeat } from './sql/write-heartbeat';

export type ReplicaHeartbeatOptions = Readonly<{
  /** The primary's pool of each database that has a replica (the service account). */
  primaries: Readonly<Record<string, Db>>;
  /** Each database's replica (the replica reader's account). */
  replicas: Readonly<Record<string, DbConnection>>;
  /** This process's row: its instance id. */
  writer: string;
  intervalMs: number;
  /** Past this without an answer from a replica, its lag is unknown. Default: 20 beats, at least 5 s. */
  staleAfterMs?: number;
  clock: Clock;
  logger: Logger;
  /** A pool on a replica; tests hand in their own. */
  openReplica?: (connection: DbConnection, database: string) => Db;
}>;

export type ReplicaHeartbeat = Group &
  Readonly<{
    /** The lag of `database`'s replica in ms; undefined when unknown (see the header). */
    lagMs: (database: string) => number | undefined;
    /** Every database with a replica, and its lag (for the metric). */
    lags: () => Readonly<Record<string, number | undefined>>;
  }>;

/** What the reader last saw on a replica: the beat it showed, and when the read was sent. */
type Seen = { seq: number | undefined; readAtMs: number };

export function replicaHeartbeat(opts: ReplicaHeartbeatOptions): ReplicaHeartbeat {
  const log = opts.logger.child({ component: 'replica-heartbeat' });
  const staleAfterMs = opts.staleAfterMs ?? Math.max(5_000, 20 * opts.intervalMs);
  const open = opts.openReplica ?? ((c: DbConnection, database: string) => createDb(c, { logger: log.child({ database, replica: true }) }));
  const databases = Object.keys(opts.replicas).filter((d) => opts.primaries[d] !== undefined);
  const logs = new Map(databases.map((d) => [d, new HeartbeatLog()]));
  const seen = new Map<string, Seen>();
  const pools = new Map(databases.map((d) => [d, open(opts.replicas[d]!, d)]));
  // Starts from this clock's ms, so a writer restarted under the same id beats above its last beat.
  let seq = Math.floor(opts.clock.now());
  const failing = new Set<string>();
  /** Runs `work`, logging the first failure of a row of them and the recovery; never throws. */
  const quietly = async (what: string, database: string, work: () => Promise<void>) => {
    const key = `${what} ${database}`;
    try {
      await work();
      if (failing.delete(key)) log.info({ database }, `${what} succeeds again`);
    } catch (err) {
      if (!failing.has(key)) log.warn({ err, database }, `${what} failed; retried every beat (replica lag unknown meanwhile if this is the read)`);
      failing.add(key);
    }
  };
  const beat = new PollLoop({
    name: 'replica heartbeat',
    tick: async () => {
      // Read, then beat: a read sees the beats of the earlier ticks, an interval old, so a replica
      // less than an interval behind reads as caught up (0) rather than as the few ms since a beat
      // written just before; the resolution is the interval either way.
      for (const d of databases) {
        const readAtMs = opts.clock.now();
        await quietly('heartbeat read on the replica', d, async () => {
          seen.set(d, { seq: await readHeartbeat(pools.get(d)!, opts.writer), readAtMs });
        });
      }
      seq += 1;
      const n = seq;
      // One database after the other: a beat is a one-row upsert, well under the interval.
      for (const d of databases) {
        await quietly('heartbeat write', d, async () => {
          await writeHeartbeat(opts.primaries[d]!, opts.writer, n);
          logs.get(d)!.committed(n, opts.clock.now());
        });
      }
    },
    intervalMs: opts.intervalMs,
    backoff: Backoffs.captureProbe,
    logger: log,
  });
  const lagMs = (database: string): number | undefined => {
    const s = seen.get(database);
    const now = opts.clock.now();
    if (s === undefined || now - s.readAtMs > staleAfterMs) return undefined;
    return logs.get(database)?.lagMs(s.seq, s.readAtMs);
  };
  const closePools = resource(async () => {
    await Promise.allSettled([...pools.values()].map((p) => p.destroy()));
  });
  // Stopped in reverse: the loop first, then the replicas' pools.
  return Object.assign(group('replica heartbeat', { pools: closePools, beat }), {
    lagMs,
    lags: () => Object.fromEntries(databases.map((d) => [d, lagMs(d)])),
  });
}
