/**
 * Reads, without locking, the current state of the rows a batch of bucket entries names, and the
 * database clock. Inputs: entity, ids. Output: db-now (epoch ms) and id → { status, expire time,
 * cancel reason } (ids as exact decimal strings); an id missing from the map has no row.
 * For `replay --dry-run` and for telling "already done" from "stale" after a replay batch: it
 * explains what the expiry transaction decides (or would), it never decides anything itself.
 * Safe to re-run: plain consistent reads (READ COMMITTED, db/knex.ts), no FOR UPDATE, so it
 * never waits for nor blocks the live expirer or the application.
 * FORCE INDEX (PRIMARY): addressed by key, like the expiry transaction (see expire-coupons.ts).
 */
import type { Knex } from 'knex';
import type { EntityType } from '../../core/bucket-entry';
import { bigintString } from '../../db/bigint-string';

export type EntryRowState = Readonly<{ status: string; expireAtMs: number; cancelReason: string | null }>;
export type EntryStates = Readonly<{ dbNowMs: number; rows: ReadonlyMap<string, EntryRowState> }>;

const SQL: Readonly<Record<EntityType, string>> = {
  coupon: 'SELECT id, status, expire_time, NULL AS cancel_reason FROM coupons FORCE INDEX (PRIMARY) WHERE id IN (?)',
  order: 'SELECT id, status, expire_time, cancel_reason FROM orders FORCE INDEX (PRIMARY) WHERE id IN (?)',
};

export async function readEntryStates(db: Knex, entity: EntityType, ids: readonly string[]): Promise<EntryStates> {
  const [[clock]] = (await db.raw('SELECT NOW(3) AS now')) as [[{ now: Date }]];
  if (ids.length === 0) return { dbNowMs: clock.now.getTime(), rows: new Map() };
  const [rows] = (await db.raw(SQL[entity], [[...new Set(ids)]])) as [Array<{ id: number | string; status: string; expire_time: Date; cancel_reason: string | null }>];
  return {
    dbNowMs: clock.now.getTime(),
    rows: new Map(rows.map((r) => [bigintString(r.id, `${entity}.id`), { status: r.status, expireAtMs: r.expire_time.getTime(), cancelReason: r.cancel_reason }])),
  };
}
