/**
 * scanner: timebucket's compensation scanner alone (`timebucket run --roles scanner`) as the
 * only scheduler, lifted from its safety-net settings: grace SCANNER_GRACE_MS (default 0; the
 * role's own default is 60 s), a pass every SCANNER_INTERVAL_MS (default 1 s; its own 30 s),
 * SCANNER_PPS pages per second (default 1000; its own 5). Progress is read from its log of
 * catches (one warn line per transaction, with the count): asking the database or its /metrics
 * (whose outbox gauge reads the outbox) would count in the rows examined.
 */
import { freePort, startRoles, waitReady } from '../../lib/children';
import { registerSchemas } from '../../lib/register-schemas';
import type { Contender } from '../contender';

export const scanner: Contender = {
  name: 'scanner',
  needsCdc: false,
  async start(ctx) {
    const port = await freePort();
    const s = ctx.params.scanner;
    const env = {
      ...process.env,
      TB_DB_NAME: ctx.dbName,
      TB_HTTP_PORT: String(port),
      TB_LOG_LEVEL: 'warn',
      TB_SCANNER_GRACE_MS: String(s.graceMs),
      TB_SCANNER_INTERVAL_MS: String(s.intervalMs),
      TB_SCANNER_MAX_PAGES_PER_SECOND: String(s.maxPagesPerSecond),
    };
    await registerSchemas(env);
    let caught = 0;
    const child = startRoles('scanner', 'scanner', env, `${ctx.logPrefix}-scanner.log`, (line) => {
      if (!line.includes('"caught"')) return;
      try {
        const n = (JSON.parse(line) as { caught?: unknown }).caught;
        if (typeof n === 'number') caught += n;
      } catch {
        // Not one of its JSON log lines.
      }
    });
    await waitReady(child, port).catch(async (err: unknown) => {
      await child.stop();
      throw err;
    });
    return { children: [child], onRows: () => undefined, progress: () => caught, stop: () => child.stop() };
  },
};
