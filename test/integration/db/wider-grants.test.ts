/**
 * Least privilege at every level. A service account a DBA gave SELECT, UPDATE on the whole
 * database and SELECT, PROCESS globally (and DELETE on a table, UPDATE of a personal-data column;
 * PROCESS counts as wider only with pacing off: the pacer may read MySQL's history list with it)
 * reads the personal data however narrowly migrate grants table by table. `check`, run as that account, names each such privilege (its level, the
 * privilege, the object) as a problem with the REVOKE to run. `migrate` grants what is needed,
 * revokes none of them (it did not grant them: they are the DBA's) and says which they are when
 * its owner may read the mysql schema; when it may not, it says it cannot see them and points at
 * `check`. On MariaDB (server 1) and on server 2 (MySQL on the mixed stack), whose grant tables
 * differ (information_schema's *_PRIVILEGES on both).
 *
 * @mysql
 * @lane isolated
 */
import { randomBytes } from 'node:crypto';
import { spawnCli } from '../../support/cli';
import { config } from '../../support/stack';
import { dbRoot } from '../../support/stack-control';
import { createTestDatabase, secondServer, type TestDatabase } from '../../support/test-database';

type Server = 1 | 2;

/** Accounts of this file's own on `server`: the service account, and an owner that may read the mysql schema. */
function accounts(server: Server, database: string) {
  const tag = randomBytes(3).toString('hex');
  const service = { user: `tb_wide_${tag}`, password: `svc-${randomBytes(6).toString('hex')}` };
  const owner = { user: `tb_wowner_${tag}`, password: `own-${randomBytes(6).toString('hex')}` };
  dbRoot(
    [
      `CREATE USER '${service.user}'@'%' IDENTIFIED BY '${service.password}'`,
      `GRANT SELECT, UPDATE ON \`${database}\`.* TO '${service.user}'@'%'`,
      `GRANT SELECT, PROCESS ON *.* TO '${service.user}'@'%'`,
      `GRANT DELETE ON \`${database}\`.\`coupons\` TO '${service.user}'@'%'`,
      `GRANT UPDATE (holder_email) ON \`${database}\`.\`coupons\` TO '${service.user}'@'%'`,
      `CREATE USER '${owner.user}'@'%' IDENTIFIED BY '${owner.password}'`,
      `GRANT ALL PRIVILEGES ON \`${database}\`.* TO '${owner.user}'@'%' WITH GRANT OPTION`,
      `GRANT SELECT ON mysql.* TO '${owner.user}'@'%'`,
    ].join('; '),
    server,
  );
  const drop = () => dbRoot(`DROP USER IF EXISTS '${service.user}'@'%'; DROP USER IF EXISTS '${owner.user}'@'%'`, server);
  return { service, owner, drop };
}

async function cli(args: string[], env: Record<string, string>) {
  const run = spawnCli(args, env);
  const { code } = await run.exited;
  return { code, out: run.stdout(), err: run.stderr() };
}

describe.each([1, 2] as const)('server %i', (server: Server) => {
  let own: TestDatabase;
  let users: ReturnType<typeof accounts>;
  const port = String(server === 2 ? secondServer().port : config.db.port);

  beforeAll(async () => {
    own = await createTestDatabase('wider', { server });
    // Personal data no statement of the service reads.
    await own.db.raw('ALTER TABLE coupons ADD COLUMN holder_email VARCHAR(100) NULL');
    users = accounts(server, own.name);
  });

  afterAll(async () => {
    users?.drop();
    await own?.drop();
  });

  const env = (as: { user: string; password: string }, extra: Record<string, string> = {}) => ({
    TB_DB_PORT: port,
    TB_DB_NAME: own.name,
    TB_DB_USER: as.user,
    TB_DB_PASSWORD: as.password,
    ...extra,
  });

  test('migrate grants what is needed, revokes nothing it did not grant, and names what it leaves', async () => {
    const { service, owner } = users;
    // Pacing off: PROCESS, which the pacer may read MySQL's history list with, is wider than needed too.
    const migrate = await cli(['migrate'], env(owner, { TB_DB_SERVICE_USER: `${service.user}@%`, TB_LOG_LEVEL: 'info', TB_PACING: 'off' }));
    expect(migrate.code).toBe(0);
    const lines = migrate.out.split('\n').filter((l) => l.startsWith('{'));
    const left = lines.map((l) => JSON.parse(l) as { msg: string; notRevoked?: string[]; revokeWith?: string[] }).find((l) => l.notRevoked !== undefined);
    expect(left?.msg).toMatch(/wider than the entities file needs, which migrate did not grant and so does not revoke \(they are a DBA's\)/);
    expect([...(left?.notRevoked ?? [])].sort()).toEqual(
      [
        'SELECT, PROCESS on *.* (global)',
        `SELECT, UPDATE on ${own.name}.* (database)`,
        `DELETE on ${own.name}.coupons (table)`,
        `UPDATE on ${own.name}.coupons.holder_email (column)`,
      ].sort(),
    );
    expect(left?.revokeWith).toContain(`REVOKE SELECT, UPDATE ON \`${own.name}\`.* FROM '${service.user}'@'%'`);
    // Still there: migrate took none of them away.
    const grants = dbRoot(`SHOW GRANTS FOR '${service.user}'@'%'`, server);
    expect(grants).toMatch(/GRANT SELECT, PROCESS ON \*\.\*/);
    expect(grants).toMatch(new RegExp(`GRANT SELECT, UPDATE ON \`${own.name}\`\\.\\*`));
  });

  test('an owner that may not read the mysql schema says it cannot see the grants it did not make', async () => {
    const stackOwner = { user: config.db.user, password: config.db.password };
    const migrate = await cli(['migrate'], env(stackOwner, { TB_DB_SERVICE_USER: `${users.service.user}@%`, TB_LOG_LEVEL: 'info' }));
    expect(migrate.code).toBe(0);
    expect(migrate.out).toMatch(
      /migrate cannot see the grants it did not make \(the owner needs SELECT on the mysql schema to read them\): run `timebucket check`/,
    );
  });

  test('check, as the service account, names each privilege wider than the file needs, with its REVOKE; exit 78', async () => {
    const { service } = users;
    const account = `'${service.user}'@'%'`;
    const widerOf = (out: string) => out.split('\n').filter((l) => l.startsWith('problem: ') && l.includes('more than the entities file needs'));
    // Pacing off, PROCESS is wider than needed like the rest.
    const unpaced = await cli(['check'], env(service, { TB_LOG_LEVEL: 'warn', TB_PACING: 'off' }));
    expect(widerOf(unpaced.out)).toContain(
      `problem: the account ${account} holds SELECT, PROCESS on *.* (global), more than the entities file needs: revoke them (REVOKE SELECT, PROCESS ON *.* FROM ${account})`,
    );
    expect(unpaced.code).toBe(78);

    // Pacing on (the default): a global PROCESS is the pacer's (MySQL's history list), not named.
    const check = await cli(['check'], env(service, { TB_LOG_LEVEL: 'warn' }));
    const problems = widerOf(check.out);
    expect(problems.sort()).toEqual(
      [
        `problem: the account ${account} holds SELECT on *.* (global), more than the entities file needs: revoke it (REVOKE SELECT ON *.* FROM ${account})`,
        `problem: the account ${account} holds SELECT, UPDATE on ${own.name}.* (database), more than the entities file needs: revoke them (REVOKE SELECT, UPDATE ON \`${own.name}\`.* FROM ${account})`,
        `problem: the account ${account} holds DELETE on ${own.name}.coupons (table), more than the entities file needs: revoke it (REVOKE DELETE ON \`${own.name}\`.\`coupons\` FROM ${account})`,
        `problem: the account ${account} holds UPDATE on ${own.name}.coupons.holder_email (column), more than the entities file needs: revoke it (REVOKE UPDATE (\`holder_email\`) ON \`${own.name}\`.\`coupons\` FROM ${account})`,
      ].sort(),
    );
    expect(check.code).toBe(78);

    // The DBA runs the REVOKEs check printed: what migrate granted is all that is left, and check passes.
    dbRoot(problems.map((p) => /\((REVOKE .*)\)$/.exec(p)![1]).join('; '), server);
    const again = await cli(['check'], env(service, { TB_LOG_LEVEL: 'warn' }));
    expect(again.out).toMatch(/^check: no problems$/m);
    expect(again.code).toBe(0);
    expect(dbRoot(`SHOW GRANTS FOR ${account}`, server)).toMatch(/GRANT PROCESS ON \*\.\*/);
  });
});
