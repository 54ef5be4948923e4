/**
 * Benchmark: a hot minute. N coupons, all due at the same instant T, written ahead of time so
 * the pipeline has scheduled them (CDC → repartitioner → minute ring) before T. Measures how long
 * after T the last one is EXPIRED, the delay distribution (expired_at − expire_time, both by the
 * database clock) and when the last event was published. Roles run as separate processes
 * (`timebucket run --roles …`), as they would be deployed, against the local stack.
 *
 *   make bench-hot-minute N=1000000 [LEAD_S=…]
 *
 * Prints one JSON line of results. Not a test: nothing is asserted.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { createDb, Db } from '../src/db/knex';
import { dbNowMs as dbNow } from './lib/db-server';
import { log, sleep } from './lib/log';
import { percentile as pct } from './lib/percentiles';

const n = Number(process.env['N'] ?? 100_000);
const insertBatch = 5_000;
const cli = join(__dirname, '../src/cli/main.js');

function startRole(roles: string, port: number): ChildProcess {
  return spawn(process.execPath, [cli, 'run', '--roles', roles], {
    env: { ...process.env, TB_LOG_LEVEL: process.env['TB_LOG_LEVEL'] ?? 'warn', TB_HTTP_PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/**
 * Whether any of the run's coupons is still ACTIVE: one probe of idx_coupons_status_expire_id,
 * so following the drain costs the database almost nothing (a COUNT(*) over the run's rows every
 * poll would read a million rows each time and slow the drain it measures).
 */
async function anyStillActive(db: Db, first: number, last: number, due: number): Promise<boolean> {
  const [rows] = (await db.raw("SELECT 1 FROM coupons WHERE status = 'ACTIVE' AND expire_time = ? AND id BETWEEN ? AND ? LIMIT 1", [
    new Date(due),
    first,
    last,
  ])) as [unknown[]];
  return rows.length > 0;
}

/** The same for the outbox: any unpublished row after `afterId`, one probe of idx_outbox_unpublished. */
async function anyUnpublished(db: Db, afterId: number): Promise<boolean> {
  const [rows] = (await db.raw('SELECT 1 FROM outbox WHERE published_at IS NULL AND id > ? LIMIT 1', [afterId])) as [unknown[]];
  return rows.length > 0;
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createDb(config.db);
  const children = [startRole('repartitioner', 9471), startRole('expirer', 9472), startRole('cascader,relay', 9473)];
  const stopChildren = () => children.forEach((c) => c.kill('SIGTERM'));
  process.on('SIGINT', () => {
    stopChildren();
    process.exit(130);
  });
  try {
    // T: far enough ahead to write N rows and let CDC schedule them (LEAD_S overrides).
    const leadS = Number(process.env['LEAD_S'] ?? Math.ceil(n / 4_000) + 30);
    const due = Math.ceil(((await dbNow(db)) + leadS * 1000) / 1000) * 1000;
    log(`writing ${n} coupons due at ${new Date(due).toISOString()} (in ${leadS} s)`);
    const [[{ outboxStart }]] = (await db.raw('SELECT COALESCE(MAX(id), 0) AS outboxStart FROM outbox')) as [[{ outboxStart: number }]];
    const started = Date.now();
    let first = 0;
    let last = 0;
    for (let i = 0; i < n; i += insertBatch) {
      const rows = Array.from({ length: Math.min(insertBatch, n - i) }, () => ({ user_id: 77, status: 'ACTIVE', expire_time: new Date(due) }));
      const [id] = await db('coupons').insert(rows);
      if (i === 0) first = id!;
      last = id! + rows.length - 1;
    }
    log(`written in ${((Date.now() - started) / 1000).toFixed(1)} s (ids ${first}..${last}); waiting for T`);
    if (last - first + 1 !== n) throw new Error('ids are not contiguous: another writer interleaved; rerun on a quiet database');

    while ((await dbNow(db)) < due) await sleep(1_000);
    log('T reached: draining');
    while (await anyStillActive(db, first, last, due)) {
      if ((await dbNow(db)) - due > 15 * 60_000) throw new Error('not drained within 15 minutes');
      await sleep(1_000);
    }
    log('every coupon expired');
    const [stats] = (await db.raw(
      'SELECT MAX(expired_at) AS last_at, MIN(expired_at) AS first_at FROM coupons WHERE id BETWEEN ? AND ?',
      [first, last],
    )) as [Array<{ last_at: Date; first_at: Date }>];
    const delays: number[] = [];
    for (let id = first; id <= last; id += 100_000) {
      const [rows] = (await db.raw(
        'SELECT TIMESTAMPDIFF(MICROSECOND, expire_time, expired_at) / 1000 AS d FROM coupons WHERE id BETWEEN ? AND ?',
        [id, Math.min(last, id + 99_999)],
      )) as [Array<{ d: number | string }>];
      for (const r of rows) delays.push(Number(r.d));
    }
    delays.sort((a, b) => a - b);
    log('waiting for the outbox to drain');
    while (await anyUnpublished(db, Number(outboxStart))) {
      if ((await dbNow(db)) - due > 20 * 60_000) throw new Error('outbox not drained within 20 minutes');
      await sleep(1_000);
    }
    // Only the run's own outbox rows: this bench assumes nothing else writes to the database.
    const [[published]] = (await db.raw('SELECT COUNT(*) AS n, MAX(published_at) AS last FROM outbox WHERE id > ?', [outboxStart])) as [
      [{ n: number | string; last: Date | null }],
    ];
    if (Number(published.n) !== n) log(`warning: ${published.n} outbox rows after the start for ${n} coupons`);
    const publishedLast = published.last;
    const drainS = (stats[0]!.last_at.getTime() - due) / 1000;
    console.log(
      JSON.stringify({
        bench: 'hot-minute',
        coupons: n,
        drain_seconds: drainS,
        expirations_per_second: Math.round(n / Math.max(drainS, 0.001)),
        delay_ms: { p50: pct(delays, 50), p99: pct(delays, 99), max: delays[delays.length - 1] },
        first_expired_after_due_ms: stats[0]!.first_at.getTime() - due,
        events_published_seconds_after_due: publishedLast ? (publishedLast.getTime() - due) / 1000 : null,
      }),
    );
  } finally {
    stopChildren();
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
