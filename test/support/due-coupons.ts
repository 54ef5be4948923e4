/**
 * Coupons due at times relative to the database's clock, for tests that watch them expire.
 */
import type { Knex } from 'knex';

/**
 * `count` ACTIVE coupons of user `userId`, due from `fromMs` to `fromMs + spreadMs` after the
 * database's NOW(3), evenly spread; one insert each, so the ids are exact whatever else writes.
 */
export async function insertDueCoupons(db: Knex, userId: number, count: number, fromMs: number, spreadMs: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const offsetUs = Math.floor((fromMs + (spreadMs * i) / count) * 1000);
    const [id] = (await db('coupons').insert({
      user_id: userId,
      status: 'ACTIVE',
      expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [offsetUs]),
    })) as number[];
    ids.push(id!);
  }
  return ids;
}
