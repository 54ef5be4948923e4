/**
 * The figures read back from the database once a run is over (never during one: these reads
 * would count in its rows examined): each transitioned row's delay, when the last transition
 * happened, and whether every row was transitioned exactly once.
 *
 * Delay = transition time − due time, both by the database clock: coupons.expired_at and
 * orders.cancel_time are the NOW(3) read in the transition's own transaction.
 */
import type { Db } from '../../src/db/knex';
import { DelaySummary, summarize } from '../lib/percentiles';
import type { Entity, Expected, IdRange, WorkloadPlan, WriteReport } from './workload';

const TRANSITION: Readonly<Record<Entity, { table: string; to: string; at: string }>> = {
  coupon: { table: 'coupons', to: 'EXPIRED', at: 'expired_at' },
  order: { table: 'orders', to: 'CANCELLED', at: 'cancel_time' },
};
const STEP = 50_000;

export type Exactness = Readonly<{
  ok: boolean;
  expected: Expected;
  /** Rows in the transitioned state, per entity. */
  transitioned: Readonly<Record<Entity, number>>;
  /** Rows still in their expirable state and due: missed. */
  missed: number;
  /** mixed: held coupons released (ACTIVE, unlinked) and still not expired. */
  released: number;
  /** Outbox rows per entity, and how many distinct rows they name: one each is exact. */
  outbox: Readonly<Record<Entity, { rows: number; distinctRows: number }>>;
  /** mixed: ORDER_CANCELLED payloads saying coupon_released = true. */
  couponReleasedEvents: number;
}>;

export type RunFigures = Readonly<{
  transitions: number;
  delayMs: DelaySummary | null;
  firstTransitionAtMs: number | null;
  lastTransitionAtMs: number | null;
  exactness: Exactness;
}>;

/** `decode`: an event value (Confluent-framed Avro) as its fields, through the registry. */
export type DecodeEvent = (value: Buffer) => Promise<Record<string, unknown>>;

export async function readFigures(db: Db, plan: WorkloadPlan, written: WriteReport, outboxIdBefore: OutboxIds, decode: DecodeEvent): Promise<RunFigures> {
  const delays = new Float64Array(plan.expected.coupon + plan.expected.order);
  let count = 0;
  let first: number | null = null;
  let last: number | null = null;
  const transitioned: Record<Entity, number> = { coupon: 0, order: 0 };
  for (const entity of ['coupon', 'order'] as const) {
    const range = written.ids[entity];
    if (range === undefined) continue;
    const { table, to, at } = TRANSITION[entity];
    for (let lo = range.min; lo <= range.max; lo += STEP) {
      const [rows] = (await db.raw(
        `SELECT TIMESTAMPDIFF(MICROSECOND, expire_time, ${at}) AS d, ${at} AS at FROM ${table}
          WHERE id BETWEEN ? AND ? AND user_id = ? AND status = ?`,
        [lo, Math.min(range.max, lo + STEP - 1), plan.tag, to],
      )) as [Array<{ d: number | string; at: Date }>];
      for (const r of rows) {
        if (count < delays.length) delays[count] = Number(r.d) / 1000;
        count += 1;
        const ms = r.at.getTime();
        first = first === null ? ms : Math.min(first, ms);
        last = last === null ? ms : Math.max(last, ms);
      }
      transitioned[entity] += rows.length;
    }
  }
  const exactness = await checkExactness(db, plan, written.ids, transitioned, outboxIdBefore, decode);
  return {
    transitions: count,
    delayMs: summarize(delays.subarray(0, Math.min(count, delays.length))),
    firstTransitionAtMs: first,
    lastTransitionAtMs: last,
    exactness,
  };
}

async function checkExactness(
  db: Db,
  plan: WorkloadPlan,
  ids: Readonly<Partial<Record<Entity, IdRange>>>,
  transitioned: Record<Entity, number>,
  outboxIdBefore: OutboxIds,
  decode: DecodeEvent,
): Promise<Exactness> {
  const one = async (sql: string, bindings: unknown[]): Promise<Record<string, number | string | null>> => {
    const [[row]] = (await db.raw(sql, bindings as never)) as [[Record<string, number | string | null>]];
    return row;
  };
  const c = ids.coupon ?? { min: 0, max: -1 };
  const o = ids.order ?? { min: 0, max: -1 };
  const missed =
    Number(
      (
        await one("SELECT COUNT(*) AS n FROM coupons WHERE id BETWEEN ? AND ? AND user_id = ? AND status = 'ACTIVE' AND expire_time <= ?", [
          c.min,
          c.max,
          plan.tag,
          new Date(plan.endRefMs),
        ])
      ).n,
    ) + Number((await one("SELECT COUNT(*) AS n FROM orders WHERE id BETWEEN ? AND ? AND user_id = ? AND status = 'UNPAID'", [o.min, o.max, plan.tag])).n);
  const released = Number(
    (
      await one(
        "SELECT COUNT(*) AS n FROM coupons WHERE id BETWEEN ? AND ? AND user_id = ? AND status = 'ACTIVE' AND locked_order_id IS NULL AND expire_time > ?",
        [c.min, c.max, plan.tag, new Date(plan.endRefMs)],
      )
    ).n,
  );
  // The event_outbox rows written since the run began (a primary-key range), joined to the run's rows.
  const eventTypes: Record<Entity, string> = { coupon: 'COUPON_EXPIRED', order: 'ORDER_CANCELLED' };
  const outboxOf = async (entity: Entity) => {
    const routed = await one(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT o.entity_id) AS d
         FROM event_outbox o JOIN ${TRANSITION[entity].table} x ON x.id = CAST(o.entity_id AS UNSIGNED)
        WHERE o.id > ? AND o.event_type = ? AND x.user_id = ?`,
      [outboxIdBefore, eventTypes[entity], plan.tag],
    );
    // coupon_released is inside the Avro value: decoded (orders only; the mixed workload's few).
    let released = 0;
    if (entity === 'order' && Number(routed.n) > 0) {
      const [rows] = (await db.raw(
        `SELECT o.payload FROM event_outbox o JOIN orders x ON x.id = CAST(o.entity_id AS UNSIGNED) WHERE o.id > ? AND o.event_type = 'ORDER_CANCELLED' AND x.user_id = ?`,
        [outboxIdBefore, plan.tag],
      )) as [Array<{ payload: Buffer }>];
      for (const r of rows) if ((await decode(r.payload))['coupon_released'] === true) released += 1;
    }
    return { n: Number(routed.n), d: Number(routed.d), r: released };
  };
  const [oc, oo] = [await outboxOf('coupon'), await outboxOf('order')];
  const outbox = { coupon: { rows: oc.n, distinctRows: oc.d }, order: { rows: oo.n, distinctRows: oo.d } };
  const couponReleasedEvents = oo.r;
  const e = plan.expected;
  const ok =
    transitioned.coupon === e.coupon &&
    transitioned.order === e.order &&
    missed === 0 &&
    released === e.released &&
    outbox.coupon.rows === e.coupon &&
    outbox.coupon.distinctRows === e.coupon &&
    outbox.order.rows === e.order &&
    outbox.order.distinctRows === e.order &&
    couponReleasedEvents === e.released;
  return { ok, expected: e, transitioned, missed, released, outbox, couponReleasedEvents };
}

/** event_outbox's last id before a run: the run's rows are those after it. */
export type OutboxIds = number;

export async function lastOutboxId(db: Db): Promise<OutboxIds> {
  const [[row]] = (await db.raw('SELECT COALESCE(MAX(id), 0) AS id FROM event_outbox')) as [[{ id: number | string }]];
  return Number(row.id);
}
