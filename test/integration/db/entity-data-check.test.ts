/**
 * The entities file against the DATA of real tables (db/check-entity-data.ts): a BIGINT due
 * column of epoch seconds declared epoch_ms is refused by `timebucket check` (exit 78) and at
 * start-up (startTimebucket, and `timebucket run` exits 78), with the kind to declare; integer
 * status codes no row holds are named; and a first pass that would transition most of a table
 * fails `check` asking for TB_ALLOW_LARGE_FIRST_PASS, unless the scanner has passed over it
 * before, while a process that transitions starts and holds that transition there
 * (db/first-pass-holds.ts; test/integration/reconcile/first-pass-hold.test.ts shows the hold).
 * Each test on a table of its own, in a database of this file's own.
 *
 * @mysql
 * @lane isolated
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../../src/config';
import type { EntityCatalogue } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { ConfigError } from '../../../src/core/errors';
import { DEFAULT_FIRST_PASS, type FirstPassLimits } from '../../../src/core/first-pass-guard';
import { checkAnsweringSchemas } from '../../../src/db/check-entity-schema';
import { grantServiceAccess } from '../../../src/db/apply-service-grants';
import { revokeStatement } from '../../../src/db/sql/grant-statements';
import { readGrantLedger } from '../../../src/db/sql/service-grant-ledger';
import { startTimebucket } from '../../../src/main';
import { loadEntities } from '../../../src/ops/load-entities';
import { loadTopology } from '../../../src/ops/load-topology';
import { spawnCli } from '../../support/cli';
import { logger, uniqueName } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { createTestPipeline } from '../../support/pipeline';

let database: TestDatabase;

// `check` runs as the service account, granted by migrate's own code what the service needs on
// this database for the entities file checked, and no more (check names any privilege wider
// than that, a whole database's too).
const serviceUser = process.env['TB_DB_SERVICE_USER'] ?? 'timebucket_app';
const servicePassword = process.env['TB_DB_SERVICE_PASSWORD'] ?? 'svc-pw-7Qx2vL9k';
const ACCOUNTS = ['%', 'localhost'].map((host) => ({ user: serviceUser, host }));

beforeAll(async () => {
  // Migrated: the scanner's cursors (scanner_cursors), the account's own tables and migrate's ledger of grants are there.
  database = await createTestDatabase('data-check');
});

afterAll(async () => {
  // Grants outlive a dropped database: take back what the ledger says was granted.
  for (const account of database ? ACCOUNTS : [])
    for (const item of await readGrantLedger(database.db, account).catch(() => []))
      await database.db.raw(revokeStatement(database.name, account, item)).catch(() => undefined);
  await database?.drop();
});

type Due = Readonly<{ column: string; kind: 'datetime' | 'epoch_ms' | 'epoch_s' }>;

/** One entity on `table`: status `status` (typed, values optional), one transition from `from` to `to`. */
function entitiesFile(
  table: string,
  due: Due,
  status: { type: 'string' | 'integer'; values?: Array<string | number> },
  from: string | number,
  to: string | number,
): unknown {
  return {
    entities: [
      {
        name: 'wallet',
        table,
        id: 'id',
        status: { column: 'status', ...status },
        transitions: [
          {
            name: 'expired',
            from: [from],
            to,
            due,
            index: `idx_${table}_status_due`,
            event: {
              type: 'WALLET_EXPIRED',
              ceType: 'shop.wallet.expired',
              avroName: 'shop.WalletExpired',
              idField: 'wallet_id',
              summary: 'A wallet coupon passed its due time.',
            },
          },
        ],
      },
    ],
  };
}

function writeEntities(content: unknown): string {
  const path = join(tmpdir(), `${uniqueName('entities')}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

/** A table of `rows` ACTIVE rows whose BIGINT due column holds epoch SECONDS, from an hour to `rows` hours ahead of the database clock. */
async function secondsTable(table: string, rows: number): Promise<void> {
  await database.db.raw(
    `CREATE TABLE ${table} (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, expire_at BIGINT NOT NULL, KEY idx_${table}_status_due (status, expire_at, id)) ENGINE=InnoDB`,
  );
  for (let i = 1; i <= rows; i += 1)
    await database.db.raw(`INSERT INTO ${table} (id, status, expire_at) VALUES (?, 'ACTIVE', UNIX_TIMESTAMP() + ? * 3600)`, [i, i]);
}

/** The problems start-up stops on, then the first passes it holds. */
async function problemsOf(file: unknown, firstPass: FirstPassLimits = DEFAULT_FIRST_PASS): Promise<string[]> {
  try {
    const { held } = await checkAnsweringSchemas({ main: database.db }, parseEntityFile(file, 'wallet.json'), { main: database.name }, firstPass);
    return held.map((h) => h.problem);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
}

async function check(env: Record<string, string>) {
  for (const account of ACCOUNTS) await grantServiceAccess(database.db, database.name, account, loadEntities(env['TB_ENTITIES']!));
  const run = spawnCli(['check'], { TB_LOG_LEVEL: 'warn', TB_DB_NAME: database.name, TB_DB_USER: serviceUser, TB_DB_PASSWORD: servicePassword, ...env });
  const { code } = await run.exited;
  return { code, out: run.stdout() };
}

/** What startTimebucket threw; a process it started after all is stopped and reported with the first passes it held. */
async function startOrError(config: Config, catalogue: EntityCatalogue): Promise<unknown> {
  return startTimebucket(config, loadTopology(config.topologyPath, catalogue), {
    roles: ['scanner'],
    logger,
    catalogue,
    instanceId: uniqueName('data-check'),
  }).then(
    async (running) => {
      const held = running.firstPassHeld().map((h) => h.reason);
      await running.stop();
      return { held };
    },
    (err: unknown) => err,
  );
}

const SECONDS_AS_MS = (table: string) =>
  new RegExp(
    `^wallet\\.expired \\(${database.name}\\.${table}\\): due column expire_at is declared epoch_ms, but none of the 40 values sampled from rows in "ACTIVE" is a plausible due time as epoch_ms: ` +
      `every such row would be due at once \\(median \\d+: as epoch_ms 1970-01-\\d\\dT.*Z, as epoch_s 20\\d\\d-.*Z\\); declare it epoch_s$`,
  );

test('epoch seconds declared epoch_ms: `check` exits 78 naming the table, the column, what the values read as and the fix; declared epoch_s it passes', async () => {
  await secondsTable('t_wallet_check', 40);
  const wrong = await check({
    TB_ENTITIES: writeEntities(entitiesFile('t_wallet_check', { column: 'expire_at', kind: 'epoch_ms' }, { type: 'string' }, 'ACTIVE', 'EXPIRED')),
  });
  const problems = wrong.out.split('\n').filter((l) => l.startsWith('problem: '));
  expect(problems).toEqual([expect.stringMatching(new RegExp(`^problem: ${SECONDS_AS_MS('t_wallet_check').source.slice(1)}`))]);
  expect(wrong.code).toBe(78);

  const right = await check({
    TB_ENTITIES: writeEntities(entitiesFile('t_wallet_check', { column: 'expire_at', kind: 'epoch_s' }, { type: 'string' }, 'ACTIVE', 'EXPIRED')),
  });
  expect(right.out).toMatch(/^check: no problems$/m);
  expect(right.code).toBe(0);
});

test('epoch seconds declared epoch_ms: start-up refuses (startTimebucket throws the ConfigError, `timebucket run` exits 78)', async () => {
  await secondsTable('t_wallet_run', 40);
  const env = {
    TB_ENTITIES: writeEntities(entitiesFile('t_wallet_run', { column: 'expire_at', kind: 'epoch_ms' }, { type: 'string' }, 'ACTIVE', 'EXPIRED')),
    TB_DB_NAME: database.name,
    TB_TOPOLOGY: 'topics/test.json',
  };
  const config = loadConfig({ ...process.env, ...env });
  const catalogue = loadEntities(config.entitiesPath);
  const refused = await startOrError(config, catalogue);
  expect(refused).toBeInstanceOf(ConfigError);
  expect(refused).toMatchObject({ details: { problems: [expect.stringMatching(SECONDS_AS_MS('t_wallet_run'))] } });

  const run = spawnCli(['run', '--roles', 'scanner'], { ...env, TB_LOG_LEVEL: 'warn', TB_HTTP_PORT: '0' });
  expect((await run.exited).code).toBe(78);
  expect(run.stdout() + run.stderr()).toMatch(/due column expire_at is declared epoch_ms, .*declare it epoch_s/);
});

test('integer status codes no row holds are named with the codes the rows do hold; one row in a declared code is enough', async () => {
  await database.db.raw(
    'CREATE TABLE t_ticket (id BIGINT PRIMARY KEY, status INT NOT NULL, expire_at DATETIME(3) NOT NULL, KEY idx_t_ticket_status_due (status, expire_at, id)) ENGINE=InnoDB',
  );
  await database.db.raw('INSERT INTO t_ticket VALUES (1, 10, NOW(3) + INTERVAL 1 DAY), (2, 20, NOW(3) + INTERVAL 1 DAY), (3, 30, NOW(3) - INTERVAL 1 DAY)');
  const file = entitiesFile('t_ticket', { column: 'expire_at', kind: 'datetime' }, { type: 'integer', values: [0, 1, 2] }, 0, 2);
  await expect(problemsOf(file)).resolves.toEqual([
    `wallet (${database.name}.t_ticket): no row holds any of the status values the file declares for status (0, 1, 2); its rows hold 10, 20, 30 (a sample): give this table's own codes in status.values and the transitions' from and to`,
  ]);
  await database.db.raw('INSERT INTO t_ticket VALUES (4, 2, NOW(3))');
  await expect(problemsOf(file)).resolves.toEqual([]);
});

test('a first pass that would transition most of a table fails `check` and is held at start, naming TB_ALLOW_LARGE_FIRST_PASS; small, allowed or already scanned, it is not', async () => {
  await database.db.raw(
    'CREATE TABLE t_backlog (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, expire_at DATETIME(3) NOT NULL, KEY idx_t_backlog_status_due (status, expire_at, id)) ENGINE=InnoDB',
  );
  // 30 ACTIVE rows overdue, 5 ACTIVE not yet due, 50 finished ones (not counted).
  for (let i = 1; i <= 85; i += 1) {
    const [status, due] =
      i <= 30 ? ['ACTIVE', 'NOW(3) - INTERVAL 1 HOUR'] : i <= 35 ? ['ACTIVE', 'NOW(3) + INTERVAL 1 DAY'] : ['EXPIRED', 'NOW(3) - INTERVAL 2 DAY'];
    await database.db.raw(`INSERT INTO t_backlog VALUES (?, ?, ${due})`, [i, status]);
  }
  const file = entitiesFile('t_backlog', { column: 'expire_at', kind: 'datetime' }, { type: 'string' }, 'ACTIVE', 'EXPIRED');
  const limits = { maxDueShare: 0.5, minDueRows: 10, allowLarge: false };
  await expect(problemsOf(file, limits)).resolves.toEqual([
    `wallet.expired (${database.name}.t_backlog): the first pass would transition 30 of the 35 rows in "ACTIVE" at once (85% are due by the database clock; ` +
      'the limit is TB_FIRST_PASS_MAX_DUE_SHARE=0.5 of tables with TB_FIRST_PASS_MIN_DUE_ROWS=10 due or more); ' +
      'if the due column and its kind are right and this backlog is meant to go now, start with TB_ALLOW_LARGE_FIRST_PASS=true',
  ]);
  await expect(problemsOf(file, { ...limits, allowLarge: true })).resolves.toEqual([]);
  await expect(problemsOf(file, { ...limits, minDueRows: 31 })).resolves.toEqual([]);
  await expect(problemsOf(file, { ...limits, maxDueShare: 0.9 })).resolves.toEqual([]);
  // The configuration reaches `check` and start-up: the same refusal from the variables, and the flag lifts it.
  const env = { TB_ENTITIES: writeEntities(file), TB_FIRST_PASS_MIN_DUE_ROWS: '10' };
  const refused = await check(env);
  expect(refused.out).toMatch(
    /^problem: wallet\.expired \(.*\.t_backlog\): the first pass would transition 30 of the 35 rows .*TB_ALLOW_LARGE_FIRST_PASS=true$/m,
  );
  expect(refused.code).toBe(78);
  expect((await check({ ...env, TB_ALLOW_LARGE_FIRST_PASS: 'true' })).code).toBe(0);
  const config = loadConfig({ ...process.env, ...env, TB_DB_NAME: database.name, TB_TOPOLOGY: 'topics/test.json' });
  const catalogue = loadEntities(config.entitiesPath);
  // Start-up no longer stops on it (exit 78): it holds that transition there.
  expect(await startOrError(config, catalogue)).toEqual({ held: [expect.stringMatching(/the first pass would transition 30 of the 35 rows/)] });
  // Once the scanner has completed a pass of the cursor, it is no first pass (a restart after an outage).
  await database.db.raw("INSERT INTO scanner_cursors (entity, last_pass_completed_at) VALUES ('wallet', NOW(3))");
  await expect(problemsOf(file, limits)).resolves.toEqual([]);
  expect((await check(env)).code).toBe(0);
});

test('every process that transitions holds a large first pass and starts: the scanner and an expirer alike; a process that transitions nothing does not count', async () => {
  // No pass of the scanner on record (the test above completed one): this is a first pass.
  await database.db('scanner_cursors').delete();
  await database.db.raw(
    'CREATE TABLE t_hot (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, expire_at DATETIME(3) NOT NULL, KEY idx_t_hot_status_due (status, expire_at, id)) ENGINE=InnoDB',
  );
  for (let i = 1; i <= 35; i += 1)
    await database.db.raw(`INSERT INTO t_hot VALUES (?, 'ACTIVE', ${i <= 30 ? 'NOW(3) - INTERVAL 1 SECOND' : 'NOW(3) + INTERVAL 1 DAY'})`, [i]);
  const pipeline = await createTestPipeline({
    entities: entitiesFile('t_hot', { column: 'expire_at', kind: 'datetime' }, { type: 'string' }, 'ACTIVE', 'EXPIRED'),
    env: { TB_DB_NAME: database.name, TB_FIRST_PASS_MIN_DUE_ROWS: '10' },
  });
  const hot = {
    transition: 'wallet.expired',
    database: 'main',
    table: 't_hot',
    reason: expect.stringMatching(/the first pass would transition 30 of the 35 rows/),
  };
  try {
    // Before, the scanner's process exited 78 while an expirer, not guarded, moved what the stream brought.
    for (const roles of [['scanner'], ['expirer']] as const) {
      const running = await pipeline.start(roles);
      expect({ roles, ok: running.health().ok, held: running.firstPassHeld() }).toEqual({ roles, ok: true, held: [hot] });
    }
    expect((await pipeline.start(['cascader'])).firstPassHeld()).toEqual([]);
  } finally {
    await pipeline.stopAll();
  }
});
