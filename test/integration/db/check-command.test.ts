/**
 * `timebucket check` against the real stack, as an operator runs it: the server's binlog
 * settings, the mapped tables, the account's privileges and the connectors of the stack's
 * Connect. The shipped default on the stack's own database, run as the service account migrate
 * granted (as an operator is told to run it: the owner holds far more than the service needs,
 * which check names), passes (exit 0); a database whose table lacks an index, run as an account
 * without the grants, fails with each problem and its fix (exit 78), and so does a binlog kept
 * for less than the Connect outage budget.
 *
 * @mysql
 * @lane isolated
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCli } from '../../support/cli';
import { uniqueName } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { stackFlavour } from '../../support/stack-flavour';
import { dbRoot } from '../../support/stack-control';

const connectUrl = `http://127.0.0.1:${process.env['TB_CONNECT_PORT'] ?? '18083'}`;
const serviceUser = process.env['TB_DB_SERVICE_USER'] ?? 'timebucket_app';
const servicePassword = process.env['TB_DB_SERVICE_PASSWORD'] ?? 'svc-pw-7Qx2vL9k';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase('check-cli', { migrate: false });
  await database.db.raw(
    'CREATE TABLE t_order (id BIGINT PRIMARY KEY, status VARCHAR(32) NOT NULL, expire_time DATETIME NOT NULL, cancel_reason VARCHAR(64) NULL)',
  );
  // Enough to connect and read the table, not to run: the check must name what is missing.
  for (const host of ['%', 'localhost']) await database.db.raw(`GRANT SELECT ON \`${database.name}\`.\`t_order\` TO ?@?`, [serviceUser, host]);
  // The service account on the stack's own database: what the service needs, as production grants it.
  const migrate = spawnCli(['migrate'], { TB_DB_SERVICE_USER: serviceUser, TB_LOG_LEVEL: 'warn' });
  expect((await migrate.exited).code).toBe(0);
});

/** As the service account, which holds what migrate granted on the stack's own database. */
const asService = { TB_DB_USER: serviceUser, TB_DB_PASSWORD: servicePassword };

afterAll(async () => {
  // Grants outlive a dropped database: take them back.
  for (const host of ['%', 'localhost'])
    await database?.db.raw(`REVOKE SELECT ON \`${database.name}\`.\`t_order\` FROM ?@?`, [serviceUser, host]).catch(() => undefined);
  await database?.drop();
});

async function check(env: Record<string, string>, args: string[] = []) {
  const run = spawnCli(['check', ...args], { TB_LOG_LEVEL: 'warn', ...env });
  const { code } = await run.exited;
  return { code, out: run.stdout(), err: run.stderr() };
}

test('the shipped entities file on the stack: server, tables, the service account and the stack connector all check out', async () => {
  const { code, out } = await check(asService, ['--connect-url', connectUrl]);
  expect(out).toMatch(
    new RegExp(`^check: ${stackFlavour()} ${stackFlavour() === 'mariadb' ? '10' : '9'}\\.\\S+, database timebucket, entities entities/default\\.json$`, 'm'),
  );
  expect(out).toMatch(/^check: no problems$/m);
  expect(code).toBe(0);
});

test('a table without the scanner index, an account without grants and no connector for the table: exit 78, each named with its fix', async () => {
  const file = join(tmpdir(), `${uniqueName('entities')}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      entities: [
        {
          name: 'order',
          table: 't_order',
          id: 'id',
          status: { column: 'status', type: 'string' },
          transitions: [
            {
              name: 'cancelled',
              from: ['UNPAID'],
              to: 'CANCELLED',
              due: { column: 'expire_time', kind: 'datetime' },
              index: 'idx_status_expire_id',
              set: { cancel_reason: { value: 'TIMEOUT' } },
              event: { type: 'T_ORDER_CANCELLED', ceType: 'shop.order.cancelled', avroName: 'shop.OrderCancelled', idField: 'order_id', summary: 'cancelled' },
            },
          ],
        },
      ],
    }),
  );
  const { code, out } = await check({ TB_ENTITIES: file, TB_DB_NAME: database.name, TB_DB_USER: serviceUser, TB_DB_PASSWORD: servicePassword }, [
    '--connect-url',
    connectUrl,
    '--json',
  ]);
  const result = JSON.parse(out) as { server: { flavour: string }; problems: string[] };
  expect(result.server.flavour).toBe(stackFlavour());
  expect(result.problems).toEqual([
    `order.cancelled (${database.name}.t_order): index idx_status_expire_id does not exist; the scanner and backfill page through (status, due, id): CREATE INDEX idx_status_expire_id ON ${database.name}.t_order (status, expire_time, id)`,
    expect.stringMatching(
      new RegExp(
        `^the account ${serviceUser} lacks UPDATE \\(status, cancel_reason\\) on ${database.name}\\.t_order; .*outbox.*: run \`timebucket migrate\` as the owner with TB_DB_SERVICE_USER=${serviceUser}$`,
      ),
    ),
    // The whole table's SELECT, where the service reads some columns: a column added later (personal data) would be readable.
    expect.stringMatching(
      new RegExp(
        `^the account '${serviceUser}'@'[^']+' holds SELECT on ${database.name}\\.t_order \\(table\\), more than the entities file needs: revoke it \\(REVOKE SELECT ON \`${database.name}\`\\.\`t_order\` FROM '${serviceUser}'@'[^']+'\\)$`,
      ),
    ),
    `no connector captures ${database.name}.t_order under topic.prefix tbcdc: register the output of \`timebucket connector config\` (PUT /connectors/<name>/config with --config-only)`,
    // Its events would stay in event_outbox: no connector publishes this database's.
    `no connector publishes ${database.name}.event_outbox under topic.prefix tbcdc-outbox: its events stay in the table; register the output of \`timebucket connector config --outbox\` (PUT /connectors/<name>/config with --config-only)`,
  ]);
  expect(code).toBe(78);
});

test('a binlog kept for less than the Connect outage budget is named with its fix, on the server the stack runs', async () => {
  const kept = dbRoot('SELECT @@GLOBAL.binlog_expire_logs_seconds').trim();
  dbRoot('SET GLOBAL binlog_expire_logs_seconds = 3600');
  try {
    const { code, out } = await check(asService, ['--json']);
    const result = JSON.parse(out) as { server: { flavour: string }; problems: string[] };
    expect(result.server.flavour).toBe(stackFlavour());
    expect(result.problems).toEqual([expect.stringMatching(/^binlog_expire_logs_seconds is 3600: a Connect outage longer than that loses changes and events/)]);
    expect(code).toBe(78);
  } finally {
    dbRoot(`SET GLOBAL binlog_expire_logs_seconds = ${Number(kept)}`);
  }
});
