/** raw: the SQL limit, timebucket's expiry transactions with nothing in front (raw-worker.ts). */
import { join } from 'node:path';
import { forkWorker } from '../../lib/children';
import type { Contender } from '../contender';
import { followWorker, RowsMessage } from './worker-messages';

export const raw: Contender = {
  name: 'raw',
  needsCdc: false,
  async start(ctx) {
    const child = forkWorker('raw', join(__dirname, 'raw-worker.js'), { ...process.env, TB_DB_NAME: ctx.dbName }, `${ctx.logPrefix}-raw.log`, 'expirer');
    let transitioned = 0;
    await followWorker(child.process, (n) => (transitioned = n)).catch(async (err: unknown) => {
      await child.stop();
      throw err;
    });
    return {
      children: [child],
      onRows: (rows) => child.process.send({ type: 'rows', rows } satisfies RowsMessage),
      progress: () => transitioned,
      stop: () => child.stop(),
    };
  },
};
