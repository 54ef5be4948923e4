/**
 * Benchmark: the compensation scanner alone. A database of the run's own holds B rows the
 * scanner must not touch (half finished long ago, half ACTIVE and due tomorrow) and N coupons
 * plus N/10 orders overdue by two minutes (misses of a stream that is down). One
 * `timebucket run --roles scanner` process catches them. Measures:
 *   - caught rows per second, from the process start to the last row transitioned;
 *   - rows the server examined per row caught (Handler_read_* deltas: page reads, the expiry
 *     transactions' lock reads and updates; the bench runs alone on the stack's server);
 *   - the cost of a pass once nothing is overdue (rows examined per second of idle passes),
 *     what the scanner costs alongside a healthy stream;
 *   - the scanner's CPU seconds.
 *
 *   make bench-scanner N=100000 B=200000 PPS=1000
 *
 * PPS is TB_SCANNER_MAX_PAGES_PER_SECOND (the production default is 5: 2,500 rows/s at the
 * default page size; the bench lifts it to find what the scanner can do). Prints one JSON line.
 * Not a test: nothing is asserted.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config';
import type { Db } from '../src/db/knex';
import { createBenchDatabase } from './lib/bench-database';
import { rowsRead } from './lib/db-server';
import { log, sleep } from './lib/log';
import { cpuSeconds } from './lib/proc';
import { registerSchemas } from './lib/register-schemas';

const overdue = Number(process.env['N'] ?? 100_000);
const background = Number(process.env['B'] ?? 200_000);
const pagesPerSecond = process.env['PPS'] ?? '1000';
const cli = join(__dirname, '../src/cli/main.js');

async function insertInChunks(db: Db, table: 'coupons' | 'orders', total: number, row: () => Record<string, unknown>): Promise<void> {
  for (let i = 0; i < total; i += 5_000) await db(table).insert(Array.from({ length: Math.min(5_000, total - i) }, row));
}

async function main(): Promise<void> {
  const { name, db, drop } = await createBenchDatabase(loadConfig(process.env), 'scanner');
  let child: ChildProcess | undefined;
  try {
    log(`filling ${name}: ${background} rows to skip, ${overdue} coupons and ${Math.round(overdue / 10)} orders overdue`);
    const past = db.raw('NOW(3) - INTERVAL 2 MINUTE');
    await insertInChunks(db, 'coupons', background / 4, () => ({ user_id: 1, status: 'EXPIRED', expire_time: db.raw('NOW(3) - INTERVAL 1 DAY') }));
    await insertInChunks(db, 'orders', background / 4, () => ({ user_id: 1, status: 'PAID', expire_time: db.raw('NOW(3) - INTERVAL 1 DAY') }));
    await insertInChunks(db, 'coupons', background / 4, () => ({ user_id: 1, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 1 DAY') }));
    await insertInChunks(db, 'orders', background / 4, () => ({ user_id: 1, status: 'UNPAID', expire_time: db.raw('NOW(3) + INTERVAL 1 DAY') }));
    await insertInChunks(db, 'coupons', overdue, () => ({ user_id: 2, status: 'ACTIVE', expire_time: past }));
    await insertInChunks(db, 'orders', Math.round(overdue / 10), () => ({ user_id: 2, status: 'UNPAID', expire_time: past }));
    await db.raw('ANALYZE TABLE coupons, orders');
    const target = overdue + Math.round(overdue / 10);
    // Progress from the scanner's own log of its catches: polling the database (COUNT(*)) would
    // read rows of its own and spoil the rows-examined figure.
    let caughtSoFar = 0;
    const caught = async () => caughtSoFar;

    await registerSchemas({ ...process.env, TB_DB_NAME: name });
    const readBefore = await rowsRead(db);
    const started = Date.now();
    child = spawn(process.execPath, [cli, 'run', '--roles', 'scanner'], {
      env: {
        ...process.env,
        TB_DB_NAME: name,
        TB_HTTP_PORT: '0',
        TB_LOG_LEVEL: 'warn',
        TB_SCANNER_INTERVAL_MS: '1000',
        TB_SCANNER_MAX_PAGES_PER_SECOND: pagesPerSecond,
        // The backlog is the point: most ACTIVE rows overdue, which start-up refuses unless told (core/first-pass-guard.ts).
        TB_ALLOW_LARGE_FIRST_PASS: 'true',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /"caught":(\d+)/.exec(line);
      if (m) caughtSoFar += Number(m[1]);
    });
    for (let n = 0; n < target; n = await caught()) {
      if (Date.now() - started > 20 * 60_000) throw new Error(`not caught within 20 minutes (${n}/${target})`);
      await sleep(250);
    }
    const seconds = (Date.now() - started) / 1000;
    const readCatching = (await rowsRead(db)) - readBefore;
    const cpuCatching = cpuSeconds(child.pid!) ?? NaN;
    const [[check]] = (await db.raw(
      "SELECT (SELECT COUNT(*) FROM coupons WHERE user_id = 2 AND status = 'EXPIRED') + (SELECT COUNT(*) FROM orders WHERE user_id = 2 AND status = 'CANCELLED') AS n",
    )) as [[{ n: number }]];
    if (Number(check.n) !== target) throw new Error(`the counter says ${target} caught, the database ${check.n}`);
    log(`${target} rows caught in ${seconds.toFixed(1)} s; measuring idle passes for 10 s`);
    const idleBefore = await rowsRead(db);
    await sleep(10_000);
    const idlePerSecond = ((await rowsRead(db)) - idleBefore) / 10;
    console.log(
      JSON.stringify({
        bench: 'scanner',
        overdue_rows: target,
        background_rows: background,
        max_pages_per_second: Number(pagesPerSecond),
        seconds_to_catch_all: Number(seconds.toFixed(2)),
        caught_per_second: Math.round(target / seconds),
        rows_examined_per_row_caught: Number((readCatching / target).toFixed(2)),
        idle_rows_examined_per_second: idlePerSecond,
        scanner_cpu_seconds: cpuCatching,
      }),
    );
  } finally {
    child?.kill('SIGTERM');
    await drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
