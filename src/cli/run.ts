import type { Config } from '../config';
import type { Topology } from '../core/topology';
import { Role, startTimebucket } from '../main';
import type { Logger } from '../ops/logger';
import { startDemo } from './demo';

/** Runs the roles until SIGINT/SIGTERM, then stops them in order (a second signal forces exit). */
export async function run(config: Config, topology: Topology, logger: Logger, roles: Role[], opts: { demo: boolean } = { demo: false }): Promise<void> {
  const running = await startTimebucket(config, topology, { roles, logger });
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
  await demo?.stop();
  await running.stop();
  logger.info('stopped');
}
