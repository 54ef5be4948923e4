/**
 * The first-pass guard holds the transitions of the table it stops, wherever they come from, and
 * nothing else (core/first-pass-guard.ts, db/first-pass-holds.ts). A mis-mapped table (40 of its
 * 50 from-state rows overdue) and a healthy one in the same database, the roles started as the
 * k8s layout groups them (repartitioner; expirer; the publisher's cascader and scanner): backfill
 * puts every overdue row of both on the due lane, the expirer transitions the healthy table's and
 * marks the held table's done untouched (counted), the publisher starts (it used to exit 78, while
 * the expirer moved the whole backlog anyway) and its scanner passes the healthy table but not the
 * held one; the gauge and /readyz name the hold. Restarted with TB_ALLOW_LARGE_FIRST_PASS=true,
 * the scanner moves the held rows: nothing marked done while held is lost.
 *
 * @lane isolated
 */
import { runBackfill } from '../../../src/cli/backfill';
import { processReadiness } from '../../../src/cli/readiness';
import { loadConfig } from '../../../src/config';
import type { Db } from '../../../src/db/knex';
import { startTimebucket } from '../../../src/main';
import { countInStatus, metricSum } from '../../support/counts';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import { logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

const entity = (name: string, type: string) => ({
  name,
  table: `t_${name}`,
  id: 'id',
  status: { column: 'status', type: 'string' },
  transitions: [
    {
      name: 'expired',
      from: ['ACTIVE'],
      to: 'EXPIRED',
      due: { column: 'expire_at', kind: 'datetime' },
      index: `idx_t_${name}_status_due`,
      event: { type, ceType: `shop.${name}.expired`, avroName: `shop.${type}`, idField: `${name}_id`, summary: `A ${name} passed its due time.` },
    },
  ],
});
const entities = { entities: [entity('wallet', 'WALLET_EXPIRED'), entity('voucher', 'VOUCHER_EXPIRED')] };

/** `overdue` of 50 ACTIVE rows due an hour ago, the rest tomorrow. */
async function table(db: Db, name: string, overdue: number): Promise<void> {
  await db.raw(
    `CREATE TABLE t_${name} (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, expire_at DATETIME(3) NOT NULL, KEY idx_t_${name}_status_due (status, expire_at, id)) ENGINE=InnoDB`,
  );
  for (let i = 1; i <= 50; i += 1)
    await db.raw(`INSERT INTO t_${name} VALUES (?, 'ACTIVE', ${i <= overdue ? 'NOW(3) - INTERVAL 1 HOUR' : 'NOW(3) + INTERVAL 1 DAY'})`, [i]);
}

let own: OwnDatabasePipeline;

beforeAll(async () => {
  own = await ownDatabasePipeline('first_pass_hold', entities, {
    tables: async (db) => {
      await table(db, 'wallet', 40); // the mis-mapped one: 80% due at once
      await table(db, 'voucher', 5); // 10%: within the limit
    },
    outbox: false,
    env: { TB_FIRST_PASS_MIN_DUE_ROWS: '10', TB_FIRST_PASS_MAX_DUE_SHARE: '0.5', TB_SCANNER_INTERVAL_MS: '300' },
  });
});

afterAll(async () => {
  await own?.stop();
});

test("a first pass refused holds that table's transitions from backfill, stream and scanner; the other table and every role run; lifted by TB_ALLOW_LARGE_FIRST_PASS", async () => {
  const { database, pipeline } = own;
  const { db } = database;
  const metric = (name: string) => {
    const m = pipeline.metrics.registry.getSingleMetric(name);
    if (m === undefined) throw new Error(`no metric ${name}`);
    return m as unknown as Parameters<typeof metricSum>[0];
  };
  const held = async () => metricSum(metric('timebucket_first_pass_held_entries_total'), { entity: 'wallet' });
  const expired = (name: string) => countInStatus(db, `t_${name}`, 'EXPIRED');

  // The k8s layout: the repartitioner and the expirer each a Deployment of their own.
  await pipeline.start(['repartitioner']);
  const expirer = await pipeline.start(['expirer']);
  const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await runBackfill(pipeline.config, pipeline.topology, pipeline.catalogue, logger, {
      transitions: pipeline.catalogue.transitions,
      window: {},
      pageSize: 25,
      json: true,
    });
  } finally {
    printed.mockRestore();
  }
  // Every overdue entry processed: the healthy table's transitioned, the held table's counted as
  // held (or, before the hold existed, transitioned).
  await waitFor(
    'the overdue entries of both tables processed',
    async () => ((await expired('voucher')) === 5 && ((await held().catch(() => 0)) >= 40 || (await expired('wallet')) > 0) ? true : undefined),
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  expect(await expired('wallet')).toBe(0);
  // At least: a rejoin of the expirer's group re-reads entries finished since its last commit.
  expect(await held()).toBeGreaterThanOrEqual(40);

  // The publisher (cascader, scanner) starts beside them, and its scanner passes the healthy
  // table while it leaves the held one alone (no pass of it completes: the guard stays armed).
  const publisher = await pipeline.start(['cascader', 'scanner']);
  const passed = async (key: string) => {
    const row = (await db('scanner_cursors').where('entity', key).first()) as { last_pass_completed_at: Date | null } | undefined;
    return row?.last_pass_completed_at != null;
  };
  await waitFor('the scanner to complete a pass of voucher', async () => ((await passed('voucher')) ? true : undefined), { timeoutMs: 30_000 });
  expect(await passed('wallet')).toBe(false);
  expect(await metricSum(metric('timebucket_scanner_rows_scanned_total'), { entity: 'wallet' })).toBe(0);
  expect(await expired('wallet')).toBe(0);

  expect(await metricSum(metric('timebucket_first_pass_held'), { entity: 'wallet', transition: 'expired' })).toBe(1);
  expect(await metricSum(metric('timebucket_first_pass_held'), { entity: 'voucher', transition: 'expired' })).toBe(0);
  for (const running of [expirer, publisher]) {
    expect(running.health().ok).toBe(true);
    const readiness = processReadiness(running, { joined: true, stopping: false });
    expect(readiness).toMatchObject({
      ready: true,
      details: {
        firstPassHeld: [
          {
            transition: 'wallet.expired',
            database: 'main',
            table: 't_wallet',
            reason: expect.stringMatching(
              /^wallet\.expired \(.*\.t_wallet\): the first pass would transition 40 of the 50 rows in "ACTIVE" at once .*TB_ALLOW_LARGE_FIRST_PASS=true$/,
            ),
          },
        ],
      },
    });
  }
  await pipeline.stopAll();

  // Lifted: the scanner catches every row the hold marked done.
  const config = loadConfig({ ...process.env, ...pipeline.env, TB_ALLOW_LARGE_FIRST_PASS: 'true' });
  const lifted = await startTimebucket(config, pipeline.topology, { roles: ['scanner'], logger, catalogue: pipeline.catalogue, instanceId: uniqueName('i') });
  try {
    await waitFor('the held rows transitioned by the scanner', async () => ((await expired('wallet')) === 40 ? true : undefined), { timeoutMs: 30_000 });
    expect(processReadiness(lifted, { joined: true, stopping: false }).details['firstPassHeld']).toEqual([]);
  } finally {
    await lifted.stop();
  }
});
