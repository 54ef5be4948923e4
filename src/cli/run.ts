import type { Config } from '../config';
import type { Topology } from '../core/topology';
import { Role, startTimebucket } from '../main';
import type { Logger } from '../ops/logger';

/** Runs the roles until SIGINT/SIGTERM, then stops them in order (a second signal forces exit). */
export async function run(config: Config, topology: Topology, logger: Logger, roles: Role[]): Promise<void> {
  const running = await startTimebucket(config, topology, { roles, logger });
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      logger.info({ signal }, 'stopping');
      process.once('SIGINT', () => process.exit(130));
      resolve();
    };
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
  });
  await running.stop();
  logger.info('stopped');
}
