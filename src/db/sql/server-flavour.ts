/**
 * Which server this is: MariaDB and MySQL 8 differ in a few settings and in the Debezium
 * connector that reads them. Inputs: none. Output: 'mariadb' | 'mysql' and the version text.
 * Safe to re-run: one read of VERSION(), which MariaDB marks with "MariaDB" (10.11.x-MariaDB…).
 */
import type { Knex } from 'knex';
import type { ServerFlavour } from '../../core/column-info';

export async function serverFlavour(db: Knex): Promise<{ flavour: ServerFlavour; version: string }> {
  const [[row]] = (await db.raw('SELECT VERSION() AS v')) as [[{ v: string }]];
  return { flavour: /mariadb/i.test(row.v) ? 'mariadb' : 'mysql', version: row.v };
}
