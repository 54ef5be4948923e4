/**
 * The foreground's process (foreground-process.ts): one Foreground on the run's database, driven
 * by the harness's requests, each answered in the order it came.
 */
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { Foreground } from './foreground';
import type { ForegroundReply, ForegroundRequest } from './foreground-process';

const config = loadConfig(process.env);
const db = createDb(config.db);
const foreground = new Foreground({ ...(JSON.parse(process.env['FOREGROUND_OPTIONS'] ?? '{}') as { rate: number; users: number; userBase: number }), db });
const reply = (r: ForegroundReply) => process.send!(r);

let queue = Promise.resolve();
process.on('message', (request: ForegroundRequest) => {
  queue = queue.then(async () => {
    try {
      if (request.type === 'seed') await foreground.seed(request.perUser);
      else if (request.type === 'start') foreground.start(request.phase);
      else if (request.type === 'phase') foreground.phase(request.name);
      const reports = request.type === 'stop' ? await foreground.stop() : undefined;
      reply({ id: request.id, ...(reports !== undefined && { reports }) });
    } catch (err) {
      reply({ id: request.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
});
process.on('SIGTERM', () => void db.destroy().finally(() => process.exit(0)));
// A harness that dies (killed, crashed) takes its foreground with it: left running, it would go on
// loading the database under the next run (seen: 200 requests a second beside a later run).
process.on('disconnect', () => process.exit(0));
