/**
 * The poller contender's process: seed 003's "Solution 1 – Scheduled Task Polling", done
 * faithfully. One job per entity (the seed's job is for orders; coupons get the same one), each:
 *
 *   @Scheduled(cron)     a run every POLL_INTERVAL_S, at multiples of it on the clock (the seed's
 *                        cron fires at second 0 of every minute); a run still going when the
 *                        next one is due makes that one skip (the seed's tryLock(0, …) fails)
 *   MAX_RUNNING_MILLIS   a run stops starting pages after POLL_MAX_RUN_S (50 s)
 *   BATCH_SIZE 300       pages of ids: status = ? AND expire_time <= NOW(3) AND id > lastId
 *                        ORDER BY id LIMIT 300 (cursor pagination, no OFFSET)
 *   orderCancelExecutor  each id in its own transaction (poller-transitions.ts), 8 at a time,
 *                        the page joined before the next one is read
 *
 * The two jobs share the 8-wide pool, as two jobs would share the seed's one executor bean.
 * A failed row is logged and left (the seed's cancelSafely): the next run finds it again.
 */
import { loadConfig } from '../../../src/config';
import { createDb } from '../../../src/db/knex';
import { createLimiter } from '../../lib/limiter';
import { bigintString } from '../../../src/db/bigint-string';
import type { Entity } from '../workload';
import { cancelOneOrder, expireOneCoupon } from './poller-transitions';
import { loadEntities } from '../../../src/ops/load-entities';
import type { OutboxWriter } from '../../../src/publish/outbox-writer';
import { openBenchEventWriter } from '../../lib/event-writer';
import type { WorkerMessage } from './worker-messages';

const PAGE_SIZE = 300;
const POOL_THREADS = 8;
const intervalMs = Number(process.env['POLL_INTERVAL_S'] ?? 60) * 1000;
const maxRunMs = Number(process.env['POLL_MAX_RUN_S'] ?? 50) * 1000;

// The pool's 8 transactions plus the two jobs' page reads.
const config = loadConfig({ ...process.env, TB_DB_POOL_MAX: String(POOL_THREADS + 2) });
const db = createDb(config.db);
const pool = createLimiter(POOL_THREADS);
const send = (m: WorkerMessage) => process.send!(m);
let transitioned = 0;
// Opened before the first run is scheduled.
let outbox!: OutboxWriter;

const JOBS: Readonly<Record<Entity, { table: string; status: string; transition: (id: string) => Promise<boolean> }>> = {
  order: { table: 'orders', status: 'UNPAID', transition: (id) => cancelOneOrder(db, outbox, id) },
  coupon: { table: 'coupons', status: 'ACTIVE', transition: (id) => expireOneCoupon(db, outbox, id) },
};
const running = new Set<Entity>();

async function scan(entity: Entity): Promise<void> {
  if (running.has(entity)) {
    process.stderr.write(`poller: ${entity} scan still running, this run skipped\n`);
    return;
  }
  running.add(entity);
  const job = JOBS[entity];
  const start = Date.now();
  let lastId = '0';
  let total = 0;
  try {
    while (Date.now() - start < maxRunMs) {
      const [rows] = (await db.raw(`SELECT id FROM ${job.table} WHERE status = ? AND expire_time <= NOW(3) AND id > ? ORDER BY id LIMIT ?`, [
        job.status,
        lastId,
        PAGE_SIZE,
      ])) as [Array<{ id: number | string }>];
      if (rows.length === 0) break;
      const ids = rows.map((r) => bigintString(r.id, 'id'));
      const done = await Promise.all(ids.map((id) => pool(() => cancelSafely(entity, id))));
      transitioned += done.filter(Boolean).length;
      send({ type: 'progress', transitioned });
      total += ids.length;
      lastId = ids[ids.length - 1]!;
    }
  } catch (err) {
    process.stderr.write(`poller: ${entity} scan failed: ${String(err)}\n`);
  } finally {
    running.delete(entity);
  }
  if (total > 0) process.stderr.write(`poller: ${entity} scan processed=${total} costMs=${Date.now() - start}\n`);
}

async function cancelSafely(entity: Entity, id: string): Promise<boolean> {
  try {
    return await JOBS[entity].transition(id);
  } catch (err) {
    process.stderr.write(`poller: ${entity} ${id} failed: ${String(err)}\n`);
    return false;
  }
}

/** The cron: fires at every multiple of the interval on the clock. */
function scheduleNext(): void {
  const now = Date.now();
  const next = Math.floor(now / intervalMs) * intervalMs + intervalMs;
  setTimeout(() => {
    scheduleNext();
    for (const entity of Object.keys(JOBS) as Entity[]) void scan(entity);
  }, next - now);
}

process.on('disconnect', () => void db.destroy().finally(() => process.exit(0)));
process.on('SIGTERM', () => void db.destroy().finally(() => process.exit(0)));

void openBenchEventWriter(config, db, loadEntities(config.entitiesPath))
  .then((opened) => {
    outbox = opened;
    scheduleNext();
    send({ type: 'ready' });
  })
  .catch((err: unknown) => {
    process.stderr.write(`poller: no database: ${String(err)}\n`);
    process.exit(1);
  });
