/**
 * `timebucket run`: the roles until SIGTERM/SIGINT, or until a part fails for good.
 *
 *   SIGTERM / SIGINT  stop within TB_SHUTDOWN_TIMEOUT_MS (below Kubernetes' grace period): finish
 *                     or abandon the batch in flight, commit only finished work, leave the
 *                     groups, exit 0. Work abandoned at the deadline is safe by construction:
 *                     it is re-read from the committed offsets, and an outbox batch's row
 *                     locks end with its connection. A second signal exits at once.
 *   a part FAILED     (a consumer crashed and kafkajs will not restart it) /healthz turns 503,
 *                     the process stops what it can within the same deadline and exits 1, so
 *                     the orchestrator restarts it instead of leaving a member that is gone.
 */
import type { Config } from '../config';
import type { Topology } from '../core/topology';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { startTimebucket, type Running } from '../main';
import type { Role } from '../roles';
import type { Logger } from '../ops/logger';
import { startDemo } from './demo';
import { createMetrics } from '../ops/metrics';
import { startOpsServer, type HealthCheck } from '../ops/http-server';
import { retry } from '../runtime/retry';
import { RetryPolicies } from '../runtime/retry-policy';
import { processReadiness } from './readiness';
import { settlesWithin } from '../runtime/lifecycle';

export const ExitCodes = { OK: 0, FAILED: 1, SIGINT: 130, SIGTERM: 143 } as const;

/** After TB_SHUTDOWN_TIMEOUT_MS, for the parts still stopped after one overran it (a second each). */
const STOP_MARGIN_MS = 5_000;

export async function run(
  config: Config,
  topology: Topology,
  catalogue: EntityCatalogue,
  logger: Logger,
  roles: Role[],
  opts: { demo: boolean } = { demo: false },
): Promise<number> {
  const metrics = createMetrics({ defaultMetrics: true, entities: catalogue.entities.map((e) => e.name), transitions: catalogue.transitions });
  let joined = false;
  let stopping = false;
  let starting: { failedAttempts: number; error: string } | undefined;
  let running: Running | undefined = undefined;
  const health = () => running?.health() ?? { ok: true, problems: [] };
  const readiness = () => processReadiness(running, { joined, stopping, ...(starting !== undefined && { starting }) });
  const ops =
    config.httpPort === 0 ? undefined : await startOpsServer({ port: config.httpPort, registry: metrics.registry, ...probes(health, readiness), logger });
  // A database or broker that does not answer yet is waited for, not exited on: an exit would
  // be restarted into the same outage (a crash loop, while the lag it raises adds replicas).
  // A database other than the main one does not even hold start-up (main.ts).
  running = await retry(() => startTimebucket(config, topology, { roles, logger, metrics, instanceId: config.instanceId, catalogue }), {
    policy: RetryPolicies.startup,
    what: 'start-up',
    logger,
    beforeWait: (err, attempt) => void (starting = { failedAttempts: attempt, error: err instanceof Error ? err.message : String(err) }),
  });
  starting = undefined;
  void running.ready().then(() => {
    joined = true;
    logger.info('all consumers joined their groups: ready');
  });
  const demo = opts.demo ? await startDemo(config, topology, logger) : undefined;

  const reason = await signalOrFailure(running);
  stopping = true;
  if (reason.err) logger.error({ err: reason.err }, 'a part failed for good: stopping, then exiting non-zero');
  else logger.info({ signal: reason.signal, deadlineMs: config.shutdownTimeoutMs }, 'stopping');
  // The parts share TB_SHUTDOWN_TIMEOUT_MS (main.ts: each overrunning part is left behind, the
  // next still stopped, a second at least); this is the last word, a little after theirs.
  const stopped = (async () => {
    await demo?.stop();
    await running.stop();
  })();
  const deadlineMs = config.shutdownTimeoutMs + STOP_MARGIN_MS;
  const inTime = await settlesWithin(stopped, deadlineMs);
  if (inTime) await stopped; // a stop that failed fails the command, as it always did
  await ops?.close();
  if (!inTime) logger.warn({ deadlineMs }, 'shutdown deadline passed: work in flight abandoned (it is re-read from the committed offsets)');
  else logger.info('stopped');
  return reason.err ? ExitCodes.FAILED : ExitCodes.OK;
}

/** /healthz and /readyz: health, readiness, and what is paused or throttled or which database does not answer. */
function probes(health: HealthCheck, readiness: () => ReturnType<typeof processReadiness>) {
  return { health, isReady: () => readiness().ready, readyDetails: () => readiness().details };
}

/** The first signal (SIGINT, SIGTERM) or the process's failure; a second signal exits at once. */
function signalOrFailure(running: Running): Promise<{ signal?: NodeJS.Signals; err?: Error }> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      // The second signal does not wait for anything.
      process.once(signal, () => process.exit(ExitCodes[signal as 'SIGINT' | 'SIGTERM']));
      resolve({ signal });
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    void running.failed.then((err) => resolve({ err }));
  });
}
