/** poller: the naive scheduled poller of seed 003 (poller-worker.ts), in a process of its own. */
import { join } from 'node:path';
import { forkWorker } from '../../lib/children';
import type { Contender } from '../contender';
import { followWorker } from './worker-messages';

export const poller: Contender = {
  name: 'poller',
  needsCdc: false,
  async start(ctx) {
    const env = { ...process.env, TB_DB_NAME: ctx.dbName, POLL_INTERVAL_S: String(ctx.params.pollIntervalS), POLL_MAX_RUN_S: String(ctx.params.pollMaxRunS) };
    const child = forkWorker('poller', join(__dirname, 'poller-worker.js'), env, `${ctx.logPrefix}-poller.log`);
    let transitioned = 0;
    await followWorker(child.process, (n) => (transitioned = n)).catch(async (err: unknown) => {
      await child.stop();
      throw err;
    });
    return { children: [child], onRows: () => undefined, progress: () => transitioned, stop: () => child.stop() };
  },
};
