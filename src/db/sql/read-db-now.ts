/**
 * Reads the database clock: inside an expiry or reminder transaction, or on any connection
 * (`explain`, the entities' data check). Inputs: none. Output: NOW(3) as epoch ms.
 * Why: the database clock decides due-ness (invariant I2); the same value guards the update and
 * stamps the transition, so "transitioned at" can never be before "due at".
 */
import type { Knex } from 'knex';

export async function readDbNow(trx: Pick<Knex, 'raw'>): Promise<number> {
  const [rows] = (await trx.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>];
  return rows[0]!.now.getTime();
}
