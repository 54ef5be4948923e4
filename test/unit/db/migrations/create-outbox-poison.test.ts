/**
 * The poison rows' move runs as two statements in the migration's own transaction, no nested
 * one: after the CREATE TABLE's implicit commit a nested transaction is a savepoint outside any
 * transaction, which knex reports as "Transaction was implicitly committed" (migrations/index.ts).
 */
import type { Knex } from 'knex';
import { up } from '../../../../src/db/migrations/20261203000000-create-outbox-poison';

test('up creates the table, then moves the old poison rows with an INSERT and a DELETE, without a transaction of its own', async () => {
  const statements: string[] = [];
  const knex = {
    schema: { createTable: async (name: string) => void statements.push(`create ${name}`) },
    raw: async (sql: string) => void statements.push(sql.trim().split(/\s+/).slice(0, 3).join(' ')),
    transaction: () => {
      throw new Error('no nested transaction');
    },
  } as unknown as Knex;
  await up(knex);
  expect(statements).toEqual(['create outbox_poison', 'INSERT INTO outbox_poison', 'DELETE FROM outbox']);
});
