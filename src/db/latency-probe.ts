/**
 * How long each database takes to answer a trivial statement, several times a second: the pacing
 * signal that sees what the application's own queries feel (issue 45). A server whose cores are
 * busy, whose threads queue or whose host is starved answers `SELECT 1` late, whatever made it
 * busy; Threads_running and the history list see only some of those causes, and the expiry
 * batches' commit latency only the batches themselves.
 *
 * The probes run on a worker thread with one connection of their own per database (the service's
 * account; one more connection per expirer process). On the expirer's own thread a probe's answer
 * would wait for the event loop, and the expirer's work (decoding, encoding events) would read as
 * the database's slowness: the pacer would brake on its own process. Each answer's time is taken
 * on the worker, and every sample goes to `onSample`; a probe that fails (the database away, the
 * deadline passed) yields no sample and is logged once per run of failures: the breakers and the
 * database watch report a database that is away, and a signal that is absent holds nothing back.
 */
import { Worker } from 'node:worker_threads';
import type { DbConnection } from '../config';
import type { Logger } from '../ops/logger';
import { resource } from '../runtime/group';
import type { Component } from '../runtime/lifecycle';
import { driverConnection } from './knex';

export type LatencyProbeOptions = Readonly<{
  /** The databases to probe, by name: the service's connection to each. */
  databases: Readonly<Record<string, DbConnection>>;
  /** A probe is scheduled every intervalMs per database, whether or not the last one has answered. */
  intervalMs: number;
  /** A probe not answered within this is a failure (and its connection is opened again). */
  timeoutMs: number;
  onSample: (database: string, latencyMs: number) => void;
  logger: Logger;
}>;

/** What the worker posts: a probe's latency, or why it failed. */
type ProbeMessage = Readonly<{ database: string; latencyMs: number }> | Readonly<{ database: string; error: string }>;

/**
 * The worker's code, plain CommonJS so it runs the same from the build and under ts-jest. The
 * probes are sent on a schedule (every intervalMs), whether or not the last one has answered, and
 * each one's latency counts from its scheduled start: a database that stalls shows as slow
 * answers, not as fewer of them (a probe that waited for the last answer would send three in a
 * second to a server that takes 300 ms, and three are too few for a tail). At most
 * maxOutstanding wait on the connection; one scheduled beyond that is skipped. A new connection
 * answers once before its answers are samples (the first includes its set-up).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const mysql = require(workerData.mysql2);
const { targets, intervalMs, timeoutMs, maxOutstanding } = workerData;
for (const [database, options] of Object.entries(targets)) {
  let conn;
  let ready = false;
  let outstanding = 0;
  const reopen = () => {
    if (conn) conn.destroy();
    conn = undefined;
    ready = false;
  };
  const open = () => {
    conn = mysql.createConnection(options);
    const c = conn;
    // An error of a connection already replaced must not close its successor.
    c.on('error', () => { if (conn === c) reopen(); });
    c.query('SELECT 1', (err) => {
      if (err) { parentPort.postMessage({ database, error: String(err.message || err) }); if (conn === c) reopen(); }
      else if (conn === c) ready = true;
    });
  };
  const probe = (scheduledAt) => {
    outstanding += 1;
    const c = conn;
    c.query({ sql: 'SELECT 1', timeout: timeoutMs }, (err) => {
      outstanding -= 1;
      if (err) {
        parentPort.postMessage({ database, error: String(err.message || err) });
        if (conn === c) reopen();
      } else parentPort.postMessage({ database, latencyMs: performance.now() - scheduledAt });
    });
  };
  let next = performance.now();
  const tick = () => {
    const now = performance.now();
    if (conn === undefined) open();
    else if (ready && outstanding < maxOutstanding) {
      while (next <= now && outstanding < maxOutstanding) {
        probe(next);
        next += intervalMs;
      }
    }
    if (next <= now) next = now + intervalMs;
    setTimeout(tick, Math.max(0, next - performance.now()));
  };
  tick();
}
`;

/** Probes waiting on one connection at most: 2 s of them at 10 a second. */
const MAX_OUTSTANDING = 20;

export function latencyProbe(opts: LatencyProbeOptions): Component {
  const log = opts.logger.child({ component: 'latency-probe' });
  const failing = new Set<string>();
  let worker: Worker | undefined;
  return resource(
    async () => {
      const w = worker;
      worker = undefined;
      if (w !== undefined) await w.terminate();
    },
    async () => {
      const targets = Object.fromEntries(Object.entries(opts.databases).map(([name, c]) => [name, connectionOptions(c)]));
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { targets, intervalMs: opts.intervalMs, timeoutMs: opts.timeoutMs, maxOutstanding: MAX_OUTSTANDING, mysql2: require.resolve('mysql2') },
        // Small: it holds a connection per database and a timer.
        resourceLimits: { maxOldGenerationSizeMb: 32 },
      });
      worker.unref();
      worker.on('message', (m: ProbeMessage) => {
        if ('error' in m) {
          if (!failing.has(m.database))
            log.warn({ database: m.database, error: m.error }, 'the latency probe failed; no probe signal from this database until it answers');
          failing.add(m.database);
          return;
        }
        if (failing.delete(m.database)) log.info({ database: m.database }, 'the latency probe answers again');
        opts.onSample(m.database, m.latencyMs);
      });
      worker.on('error', (err) => log.error({ err }, 'the latency probe thread failed; pacing goes on without its signal'));
    },
  );
}

/** The pool's connection settings (db/knex.ts), with a deadline for the connection's set-up. */
function connectionOptions(c: DbConnection): Record<string, unknown> {
  return { ...driverConnection(c), database: c.database, connectTimeout: 10_000 };
}
