/**
 * The three workloads, the same rows for every contender (written afresh for each):
 *
 *   hot     N coupons, all due at one instant T, written ahead of T.
 *   steady  R coupons due per second for M minutes, each second's rows spread over that second
 *           and written STEADY_LEAD_S ahead of it, as they are written, second by second.
 *   mixed   N rows due at T: N/2 unpaid orders (every 4th holding a LOCKED coupon of its own,
 *           due a day later: cancelling the order releases it, LOCKED → ACTIVE, and it must NOT
 *           expire) and N/2 free coupons.
 *
 * Every row carries the run's tag as user_id, and ids are read back from the inserts: a run's
 * database is its own and the writer its only inserter, so each multi-row INSERT gets consecutive
 * ids in every innodb_autoinc_lock_mode (in 2, MySQL's default, a simple INSERT reserves all its
 * rows' ids at once; only concurrent inserters interleave). The rows of a run are found by a
 * primary-key range plus the tag, never by scanning the table; `verifyIds` proves the premise
 * after each run (after its figures were taken, so its reads are no contender's).
 */
import { randomInt } from 'node:crypto';
import type { Db } from '../../src/db/knex';
import { log, sleep } from '../lib/log';
import type { BenchParams, WorkloadName } from './params';

export type Entity = 'coupon' | 'order';

/** Rows just written: ids firstId, firstId + 1, … with these due times (epoch ms). */
export type WrittenRows = Readonly<{ entity: Entity; firstId: number; dueMs: readonly number[] }>;

/** What a correct contender does to the run's rows. */
export type Expected = Readonly<{ coupon: number; order: number; released: number }>;

export type IdRange = Readonly<{ min: number; max: number }>;

export type WriteReport = Readonly<{
  ids: Readonly<Partial<Record<Entity, IdRange>>>;
  /** When the last row was in (epoch ms, this machine's clock). */
  doneAtMs: number;
  /** steady: the most a second's rows were written after their schedule (the writer falling behind). */
  maxWriterLagMs: number;
}>;

export type WorkloadPlan = Readonly<{
  name: WorkloadName;
  tag: number;
  expected: Expected;
  /** Throughput is counted from here: T, or the first due time of steady. */
  startRefMs: number;
  /** "Seconds until the last transition" are counted from here: T, or the end of steady's schedule. */
  endRefMs: number;
  write: (db: Db, onRows: (rows: WrittenRows) => void) => Promise<WriteReport>;
}>;

const CHUNK = 5_000;
const DAY_MS = 86_400_000;

export function planWorkload(name: WorkloadName, params: BenchParams, opts: { nowMs: number; leadS: number; alignToMs?: number }): WorkloadPlan {
  const tag = randomInt(1_000_000_000, 2_000_000_000);
  if (name === 'steady') return planSteady(params, tag, opts.nowMs);
  const t = dueInstant(opts.nowMs + opts.leadS * 1000, opts.alignToMs);
  // isolation: the hot minute, with the application's foreground beside it (run-one.ts).
  if (name === 'hot' || name === 'isolation') {
    return {
      name,
      tag,
      expected: { coupon: params.n, order: 0, released: 0 },
      startRefMs: t,
      endRefMs: t,
      write: (db, onRows) => writeHot(db, tag, params.n, t, onRows),
    };
  }
  const orders = Math.floor(params.n / 2);
  const holders = Math.ceil(orders / 4);
  return {
    name,
    tag,
    expected: { coupon: params.n - orders, order: orders, released: holders },
    startRefMs: t,
    endRefMs: t,
    write: (db, onRows) => writeMixed(db, tag, { orders, coupons: params.n - orders }, t, onRows),
  };
}

/**
 * T: a whole second at or after `earliest`. With `alignToMs` (the poller's period), T falls in
 * the middle of a period: the poller's cron fires at multiples of its period, so half a period
 * is its expected wait for a random due time; aligning makes its figures repeatable.
 */
function dueInstant(earliest: number, alignToMs?: number): number {
  if (alignToMs === undefined) return Math.ceil(earliest / 1000) * 1000;
  const half = alignToMs / 2;
  return Math.ceil((earliest - half) / alignToMs) * alignToMs + half;
}

async function insertChunk(db: Db, table: 'coupons' | 'orders', rows: Array<Record<string, unknown>>): Promise<number> {
  if (rows.length === 0) return 0;
  const [first] = (await db(table).insert(rows)) as number[];
  return first!;
}

/**
 * Throws unless each entity's id range holds exactly the run's rows and nothing else: then every
 * id the contenders were told (firstId + i) is the row it names. One index read per entity
 * (idx_coupons_user leads with user_id; orders have no such index and are scanned: the run's
 * own, small table).
 */
export async function verifyIds(db: Db, tag: number, written: WriteReport): Promise<void> {
  for (const [entity, range] of Object.entries(written.ids) as Array<[Entity, IdRange | undefined]>) {
    if (range === undefined) continue;
    const table = entity === 'coupon' ? 'coupons' : 'orders';
    const [[r]] = (await db.raw(`SELECT COUNT(*) AS n, MIN(id) AS lo, MAX(id) AS hi FROM ${table} WHERE user_id = ?`, [tag])) as [
      [{ n: number; lo: number; hi: number }],
    ];
    const span = range.max - range.min + 1;
    if (Number(r.n) !== span || Number(r.lo) !== range.min || Number(r.hi) !== range.max) {
      throw new Error(
        `${table}: the run's ${r.n} rows span ids ${r.lo}..${r.hi}, not ${range.min}..${range.max} as read back from the inserts: the ids were not consecutive (another inserter?)`,
      );
    }
  }
}

function widen(range: IdRange | undefined, first: number, count: number): IdRange {
  const last = first + count - 1;
  return range === undefined ? { min: first, max: last } : { min: Math.min(range.min, first), max: Math.max(range.max, last) };
}

async function writeHot(db: Db, tag: number, n: number, t: number, onRows: (rows: WrittenRows) => void): Promise<WriteReport> {
  let coupons: IdRange | undefined;
  for (let i = 0; i < n; i += CHUNK) {
    const count = Math.min(CHUNK, n - i);
    const first = await insertChunk(
      db,
      'coupons',
      Array.from({ length: count }, () => ({ user_id: tag, status: 'ACTIVE', expire_time: new Date(t) })),
    );
    coupons = widen(coupons, first, count);
    onRows({ entity: 'coupon', firstId: first, dueMs: new Array<number>(count).fill(t) });
  }
  return { ids: { coupon: coupons }, doneAtMs: Date.now(), maxWriterLagMs: 0 };
}

async function writeMixed(
  db: Db,
  tag: number,
  sizes: { orders: number; coupons: number },
  t: number,
  onRows: (rows: WrittenRows) => void,
): Promise<WriteReport> {
  let coupons: IdRange | undefined;
  let orders: IdRange | undefined;
  const orderChunk = 4_000;
  for (let i = 0; i < sizes.orders; i += orderChunk) {
    const count = Math.min(orderChunk, sizes.orders - i);
    // Orders i, i + 4, … of the whole run hold a coupon: written LOCKED first, linked both ways after.
    const holders = Array.from({ length: count }, (_, k) => (i + k) % 4 === 0);
    const held = holders.filter(Boolean).length;
    const firstHeld = await insertChunk(
      db,
      'coupons',
      Array.from({ length: held }, () => ({ user_id: tag, status: 'LOCKED', expire_time: new Date(t + DAY_MS) })),
    );
    if (held > 0) coupons = widen(coupons, firstHeld, held);
    let next = firstHeld;
    const firstOrder = await insertChunk(
      db,
      'orders',
      holders.map((holds) => ({ user_id: tag, status: 'UNPAID', expire_time: new Date(t), coupon_id: holds ? next++ : null })),
    );
    orders = widen(orders, firstOrder, count);
    await db.raw(
      `UPDATE coupons c JOIN orders o ON o.coupon_id = c.id SET c.locked_order_id = o.id
        WHERE o.id BETWEEN ? AND ? AND c.id BETWEEN ? AND ?`,
      [firstOrder, firstOrder + count - 1, firstHeld, firstHeld + held - 1],
    );
    onRows({ entity: 'order', firstId: firstOrder, dueMs: new Array<number>(count).fill(t) });
  }
  for (let i = 0; i < sizes.coupons; i += CHUNK) {
    const count = Math.min(CHUNK, sizes.coupons - i);
    const first = await insertChunk(
      db,
      'coupons',
      Array.from({ length: count }, () => ({ user_id: tag, status: 'ACTIVE', expire_time: new Date(t) })),
    );
    coupons = widen(coupons, first, count);
    onRows({ entity: 'coupon', firstId: first, dueMs: new Array<number>(count).fill(t) });
  }
  return { ids: { coupon: coupons, order: orders }, doneAtMs: Date.now(), maxWriterLagMs: 0 };
}

function planSteady(params: BenchParams, tag: number, nowMs: number): WorkloadPlan {
  const seconds = Math.max(1, Math.round(params.minutes * 60));
  const rate = params.ratePerSecond;
  // The first second's rows are written STEADY_LEAD_S ahead of it, and a second from now at the earliest.
  const firstDue = Math.ceil((nowMs + 1_000) / 1000) * 1000 + params.steadyLeadS * 1000;
  // The database clock − this one: the schedule is the database's, the sleeps are this process's.
  const offset = nowMs - Date.now();
  return {
    name: 'steady',
    tag,
    expected: { coupon: seconds * rate, order: 0, released: 0 },
    startRefMs: firstDue,
    // The last row's due time: the end of the schedule.
    endRefMs: firstDue + (seconds - 1) * 1000 + Math.floor(((rate - 1) * 1000) / rate),
    write: async (db, onRows) => {
      let coupons: IdRange | undefined;
      let maxWriterLagMs = 0;
      for (let s = 0; s < seconds; s += 1) {
        const second = firstDue + s * 1000;
        const writeAt = second - params.steadyLeadS * 1000 - offset;
        const wait = writeAt - Date.now();
        if (wait > 0) await sleep(wait);
        else maxWriterLagMs = Math.max(maxWriterLagMs, -wait);
        for (let i = 0; i < rate; i += CHUNK) {
          const dueMs = Array.from({ length: Math.min(CHUNK, rate - i) }, (_, k) => second + Math.floor(((i + k) * 1000) / rate));
          const first = await insertChunk(
            db,
            'coupons',
            dueMs.map((due) => ({ user_id: tag, status: 'ACTIVE', expire_time: new Date(due) })),
          );
          coupons = widen(coupons, first, dueMs.length);
          onRows({ entity: 'coupon', firstId: first, dueMs });
        }
      }
      if (maxWriterLagMs > 1_000) log(`steady: the writer fell behind its schedule by up to ${(maxWriterLagMs / 1000).toFixed(1)} s`);
      return { ids: { coupon: coupons }, doneAtMs: Date.now(), maxWriterLagMs };
    },
  };
}
