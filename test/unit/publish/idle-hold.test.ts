import type { Knex } from 'knex';
import { idleHoldVariableOf, limitIdleHold } from '../../../src/publish/sql/lock-outbox-batch';

function recorder() {
  const sql: string[] = [];
  const trx = { raw: async (s: string) => void sql.push(s) } as unknown as Knex.Transaction;
  return { sql, trx };
}

test('MariaDB bounds an idle transaction, MySQL 8 (no such variable) an idle connection: whole seconds, then the default again', async () => {
  expect(idleHoldVariableOf('mariadb')).toBe('idle_transaction_timeout');
  expect(idleHoldVariableOf('mysql')).toBe('wait_timeout');
  const { sql, trx } = recorder();
  await limitIdleHold(trx, 30_000, 'wait_timeout');
  await limitIdleHold(trx, 1_500, 'idle_transaction_timeout');
  await limitIdleHold(trx, 'DEFAULT', 'wait_timeout');
  expect(sql).toEqual(['SET SESSION wait_timeout = 30', 'SET SESSION idle_transaction_timeout = 2', 'SET SESSION wait_timeout = DEFAULT']);
});
