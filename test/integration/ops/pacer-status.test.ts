/**
 * `ctl status` shows each running expirer's pacers: what the publisher writes to pacer_state is
 * what status reads back (fresh rows of the scope only), and an instance that stops takes its
 * rows with it. On a database of the file's own, migrated, on both servers.
 *
 * @lane isolated
 */
import { pacerStatePublisher } from '../../../src/control/pacer-state-publisher';
import type { PacerView } from '../../../src/core/pacer';
import { pacerLines, readPacers } from '../../../src/cli/pacer-status';
import { logger } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';

const views = new Map<string, PacerView>([
  ['main', { rate: Infinity, healthRate: Infinity, budgetRate: 0, state: 'healthy', budgetUsed: 0 }],
  ['shop_b', { rate: 1_250, healthRate: 1_250, budgetRate: 400, state: 'backing-off', limitedBy: 'threads_running', budgetUsed: 0.25 }],
]);

describe.each([1, 2] as const)('server %i', (server) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(`pacer-status-${server}`, { server });
  });
  afterAll(async () => {
    await database?.drop();
  });

  test("a running instance's pacers are in ctl status, another scope's are not, and they go when it stops", async () => {
    const db = database.db;
    const publisher = pacerStatePublisher({ db, scope: 'tb-a', instance: 'expirer-1', views: () => views, intervalMs: 100, logger });
    const other = pacerStatePublisher({ db, scope: 'tb-b', instance: 'expirer-9', views: () => views, intervalMs: 100, logger });
    await publisher.start();
    await other.start();
    try {
      const pacers = await waitFor('the pacers published', async () => {
        const rows = await readPacers(db, 'tb-a');
        return rows !== null && rows.length === 2 ? rows : undefined;
      });
      expect(pacers.map(({ ageMs, ...p }) => ({ ...p, fresh: ageMs >= 0 && ageMs < 30_000 }))).toEqual([
        { instance: 'expirer-1', database: 'main', rate: null, healthRate: null, budgetRate: 0, state: 'healthy', limitedBy: null, budgetUsed: 0, fresh: true },
        {
          instance: 'expirer-1',
          database: 'shop_b',
          rate: 1_250,
          healthRate: 1_250,
          budgetRate: 400,
          state: 'backing-off',
          limitedBy: 'threads_running',
          budgetUsed: 0.25,
          fresh: true,
        },
      ]);
      const text = pacerLines(pacers).join('\n');
      expect(text).toMatch(/\n {2}main +unlimited +healthy +oldest due row at 0 % of its lateness budget; expirer-1, /);
      expect(text).toMatch(/\n {2}shop_b +1250\/s +backing-off \(threads_running\) +oldest due row at 25 % of its lateness budget; expirer-1, /);
    } finally {
      await publisher.stop();
    }
    expect(await readPacers(db, 'tb-a')).toEqual([]);
    expect(pacerLines([])).toEqual(['pacers: no expirer has published its pacers in the last 30 s']);
    expect((await readPacers(db, 'tb-b'))?.map((p) => p.instance)).toEqual(['expirer-9', 'expirer-9']);
    await other.stop();
  });
});

test('status on a database migrate has not reached says so instead of failing', async () => {
  const bare = await createTestDatabase('pacer-status-bare', { migrate: false });
  try {
    expect(await readPacers(bare.db, 'tb-a')).toBeNull();
    expect(pacerLines(null)).toEqual(['pacers: table pacer_state is missing (run `timebucket migrate`)']);
  } finally {
    await bare.drop();
  }
});
