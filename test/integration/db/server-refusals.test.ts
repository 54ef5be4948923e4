/**
 * What the server answers when it refuses the service for a while, and how the service classes
 * it, on MariaDB and on MySQL, whose error numbers differ: a retriable refusal keeps the entries
 * waiting (nothing parked, nothing dead-lettered), a deterministic one parks them after a few
 * tries. An account an operator locked (MariaDB 4151, MySQL 3118) and a statement an operator
 * killed while it waited on a row lock (1317 on both) are "not now": the same entries succeed
 * once the account is unlocked or the statement is left alone.
 *
 * @mysql
 * @lane isolated
 */
import { randomBytes } from 'node:crypto';
import { classifyFailure } from '../../../src/runtime/retry-policy';
import { createDb } from '../../../src/db/knex';
import { config } from '../../support/stack';
import { dbRoot } from '../../support/stack-control';
import { stackFlavour } from '../../support/stack-flavour';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';

let own: TestDatabase;

beforeAll(async () => {
  own = await createTestDatabase('refusals', { migrate: false });
  await own.db.raw('CREATE TABLE t (id BIGINT PRIMARY KEY, n INT NOT NULL)');
  await own.db.raw('INSERT INTO t VALUES (1, 0)');
});

afterAll(async () => {
  await own?.drop();
});

test('an account an operator locked is refused with its server’s own number, classed retriable; unlocked, it connects', async () => {
  const user = `tb_locked_${randomBytes(3).toString('hex')}`;
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const hosts = ['%', 'localhost'];
  dbRoot(
    hosts.map((h) => `CREATE USER '${user}'@'${h}' IDENTIFIED BY '${password}' ACCOUNT LOCK; GRANT SELECT ON \`${own.name}\`.* TO '${user}'@'${h}';`).join(' '),
  );
  const db = createDb({ ...config.db, user, password }, { database: own.name });
  try {
    const refusal = await db.raw('SELECT n FROM t').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusal).toMatchObject({ errno: stackFlavour() === 'mysql' ? 3118 : 4151 });
    expect(classifyFailure(refusal)).toBe('retriable');

    dbRoot(hosts.map((h) => `ALTER USER '${user}'@'${h}' ACCOUNT UNLOCK;`).join(' '));
    const [rows] = (await db.raw('SELECT n FROM t')) as [Array<{ n: number }>];
    expect(rows).toEqual([{ n: 0 }]);
  } finally {
    await db.destroy();
    dbRoot(hosts.map((h) => `DROP USER IF EXISTS '${user}'@'${h}';`).join(' '));
  }
});

test('a statement killed by an operator while it waited on a row lock is classed retriable, and the same update then succeeds', async () => {
  const holder = await own.db.transaction();
  // A transaction of its own: one session, whose id the operator's KILL QUERY names.
  const waiter = await own.db.transaction();
  try {
    await holder.raw('SELECT n FROM t WHERE id = 1 FOR UPDATE');
    const [[session]] = (await waiter.raw('SELECT CONNECTION_ID() AS id')) as [[{ id: number }]];
    const outcome = waiter.raw('UPDATE t SET n = n + 1 WHERE id = 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    await waitFor('the update waiting on the row lock', () => (waitsOnALock(session.id) ? true : undefined), { timeoutMs: 10_000, intervalMs: 50 });
    dbRoot(`KILL QUERY ${session.id}`);
    const killed = await outcome;
    expect(killed).toMatchObject({ errno: 1317 });
    expect(classifyFailure(killed)).toBe('retriable');
    await waiter.rollback();

    await holder.commit();
    await own.db.raw('UPDATE t SET n = n + 1 WHERE id = 1');
    const [rows] = (await own.db.raw('SELECT n FROM t WHERE id = 1')) as [Array<{ n: number }>];
    expect(rows).toEqual([{ n: 1 }]);
  } finally {
    for (const trx of [waiter, holder]) if (!trx.isCompleted()) await trx.rollback().catch(() => undefined);
  }
});

/** Whether session `id` waits for a row lock now (read as the stack's root: it needs PROCESS). */
function waitsOnALock(id: number): boolean {
  // MariaDB 10.11 has no performance_schema.data_lock_waits; MySQL's INNODB_TRX is read the
  // same way, but performance_schema names the waiting session directly.
  const sql =
    stackFlavour() === 'mysql'
      ? `SELECT COUNT(*) FROM performance_schema.data_lock_waits w JOIN performance_schema.threads t ON t.THREAD_ID = w.REQUESTING_THREAD_ID WHERE t.PROCESSLIST_ID = ${id}`
      : `SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ${id} AND trx_state = 'LOCK WAIT'`;
  return dbRoot(sql).trim() !== '0';
}
