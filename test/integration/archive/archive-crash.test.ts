/**
 * The archive's mover killed with SIGKILL mid-pass, three times, at moments of the test's
 * choosing while pages are being copied and deleted (test/support/archive-child.js runs the built
 * mover page after page): after each kill every row is in exactly one of the two tables, none in
 * both, none lost; a pass afterwards moves the rest, each row once, its content as it was.
 *
 * @mysql
 * @lane isolated
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { createArchiveTable } from '../../../src/db/sql/create-archive-table';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { archivePass, firstTablePage } from '../../support/archive';
import { passEntity } from '../../support/entity-fixtures';

const ROWS = 20_000;
const file = {
  entities: [
    passEntity({
      archive: {
        finalStates: ['CLOSED'],
        since: { column: 'closed_at', kind: 'datetime' },
        after: '1h',
        table: '{table}_archive',
        index: 'idx_passes_status_closed_id',
      },
    }),
  ],
};
const catalogue = parseEntityFile(file, 'crash.json');
const entity = entityOf(catalogue, 'pass');
const entitiesPath = join(tmpdir(), `archive-crash-${process.pid}.json`);

let db: TestDatabase;
let child: ChildProcess | undefined;

beforeAll(async () => {
  writeFileSync(entitiesPath, JSON.stringify(file));
  db = await createTestDatabase('archive-crash', { migrate: false });
  await db.db.raw(`CREATE TABLE passes (
    id BIGINT PRIMARY KEY AUTO_INCREMENT,
    status VARCHAR(16) NOT NULL,
    close_at DATETIME(3) NOT NULL,
    closed_at DATETIME(3) NULL,
    KEY idx_passes_status_close_id (status, close_at, id),
    KEY idx_passes_status_closed_id (status, closed_at, id)
  )`);
  // Closed two hours ago, one millisecond apart, in statements of 1,000.
  for (let from = 0; from < ROWS; from += 1_000) {
    await db.db.raw(
      `INSERT INTO passes (status, close_at, closed_at)
       WITH RECURSIVE seq (i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
       SELECT 'CLOSED', NOW(3) - INTERVAL 3 HOUR, NOW(3) - INTERVAL 2 HOUR + INTERVAL i * 1000 MICROSECOND FROM seq`,
      [from, from + 999],
    );
  }
  await createArchiveTable(db.db, 'passes', 'passes_archive', 'id');
});

afterAll(async () => {
  child?.kill('SIGKILL');
  await db?.drop();
});

const count = async (sql: string) => Number(((await db.db.raw(sql)) as [Array<{ n: number | string }>])[0][0]!.n);

/** Every row in exactly one table (committed data: a killed transaction's copy is not). */
async function invariant(): Promise<{ hot: number; archived: number; both: number }> {
  return {
    hot: await count('SELECT COUNT(*) AS n FROM passes'),
    archived: await count('SELECT COUNT(*) AS n FROM passes_archive'),
    both: await count('SELECT COUNT(*) AS n FROM passes h JOIN passes_archive a ON a.id = h.id'),
  };
}

test('killed three times mid-pass, each row stays in exactly one table; a pass afterwards moves the rest once each', async () => {
  const before = await db.db('passes').select('id', 'closed_at').orderBy('id');
  for (const atLeast of [2_000, 6_000, 10_000]) {
    const proc = spawn(process.execPath, [join(__dirname, '../../support/archive-child.js'), entitiesPath, '50'], {
      env: { ...process.env, TB_DB_NAME: db.name, TB_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    let stderr = '';
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    await waitFor(
      `the mover to archive ${atLeast} rows`,
      async () => {
        if (proc.exitCode !== null) throw new Error(`the mover exited (${proc.exitCode}): ${stderr}`);
        return (await count('SELECT COUNT(*) AS n FROM passes_archive')) >= atLeast ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    proc.kill('SIGKILL');
    expect(await exited).toBeNull();
    child = undefined;
    const state = await invariant();
    expect(state.both).toBe(0);
    expect(state.hot + state.archived).toBe(ROWS);
    expect(state.archived).toBeLessThan(ROWS);
  }

  // The rest, in this process; a row a killed transaction still held is free once the server has
  // dropped its connection.
  const page = await firstTablePage(db.db, entity);
  await waitFor(
    'every row archived',
    async () => {
      await archivePass(db.db, entity, page, 1_000);
      return (await count('SELECT COUNT(*) AS n FROM passes')) === 0 ? true : undefined;
    },
    {
      timeoutMs: 60_000,
      intervalMs: 200,
    },
  );
  expect(await invariant()).toEqual({ hot: 0, archived: ROWS, both: 0 });
  expect(await db.db('passes_archive').select('id', 'closed_at').orderBy('id')).toEqual(before);
}, 240_000);
