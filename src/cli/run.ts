import type { Config } from '../config';
import type { Topology } from '../core/topology';
import { Role, startTimebucket } from '../main';
import type { Logger } from '../ops/logger';
import { startDemo } from './demo';
import { createMetrics } from '../ops/metrics';
import { startOpsServer } from '../ops/http-server';

/** Runs the roles until SIGINT/SIGTERM, then stops them in order (a second signal forces exit). */
export async function run(config: Config, topology: Topology, logger: Logger, roles: Role[], opts: { demo: boolean } = { demo: false }): Promise<void> {
  const metrics = createMetrics({ defaultMetrics: true });
  let ready = false;
  let stopping = false;
  const ops =
    config.httpPort === 0
      ? undefined
      : await startOpsServer({ port: config.httpPort, registry: metrics.registry, isReady: () => ready && !stopping, logger });
  const running = await startTimebucket(config, topology, { roles, logger, metrics });
  void running.ready().then(() => {
    ready = true;
    logger.info('all consumers joined their groups: ready');
  });
  const demo = opts.demo ? await startDemo(config, topology, logger) : undefined;
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      logger.info({ signal }, 'stopping');
      process.once('SIGINT', () => process.exit(130));
      resolve();
    };
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
  });
  stopping = true;
  await demo?.stop();
  await running.stop();
  await ops?.close();
  logger.info('stopped');
}
