/**
 * The pacer on the real server (issue 45): a burst of due rows expires while connections of this
 * file's own, sleeping in SELECT SLEEP, raise the server's Threads_running above the threshold
 * this pipeline is given. The pacer reads the signal from the server, backs off and names it
 * (timebucket_pacing_limited_by{signal="threads_running"}), and the budget, not health, then sets
 * the rate (timebucket_pacing_state{state="budget-bound"}). Every row still transitions once, in
 * due order (one batch at a time: TB_EXPIRER_CONCURRENCY=1, so the database's clock orders them),
 * never before its due time and within the entity's lateness budget.
 *
 * Its threshold is below the default (25) and its sleepers few, so other pipelines on the stack,
 * at the default, do not see them. Also: the signals read on the second server, whichever
 * flavour it runs (MySQL's history list needs PROCESS: absent without it).
 *
 * @lane isolated
 */
import { bucketRecord, byTopic } from '../../../src/core/bucket-record';
import { processReadiness } from '../../../src/cli/readiness';
import { parseEntityFile } from '../../../src/core/entity-file';
import { createDb, type Db } from '../../../src/db/knex';
import { pacerSignalReader } from '../../../src/db/pacer-signals';
import { serverFlavour } from '../../../src/db/sql/server-flavour';
import { createKafka } from '../../../src/kafka/client';
import { countInStatus, metricSum } from '../../support/counts';
import { createTestPipeline, type TestPipeline } from '../../support/pipeline';
import { config as stackConfig, logger } from '../../support/stack';
import { createTestDatabase, secondServer, type TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { passEntity } from '../../support/entity-fixtures';

const BUDGET_S = 40;
const ROWS = 3_000;
/** Threads_running at or above this is overload for this pipeline; the sleepers alone reach it. */
const THRESHOLD = 5;
const SLEEPERS = 6;

const entities = { entities: [passEntity({ latenessBudgetSeconds: BUDGET_S })] };
const catalogue = parseEntityFile(entities, 'pacing entities');

let db: TestDatabase;
let pipeline: TestPipeline;
let running: Awaited<ReturnType<TestPipeline['start']>>;
let sleepers: Db | undefined;

beforeAll(async () => {
  db = await createTestDatabase('pacing');
  await db.db.raw(`CREATE TABLE passes (
    id BIGINT PRIMARY KEY AUTO_INCREMENT,
    status VARCHAR(16) NOT NULL,
    close_at DATETIME(3) NOT NULL,
    closed_at DATETIME(3) NULL,
    KEY idx_passes_status_close_id (status, close_at, id)
  )`);
  pipeline = await createTestPipeline({
    entities,
    env: {
      TB_DB_NAME: db.name,
      TB_PACING: 'on',
      TB_PACING_MAX_THREADS_RUNNING: String(THRESHOLD),
      // This file is about Threads_running: the probe (hold/pacing-probe.test.ts) must not name itself on a busy CI machine.
      TB_PACING_PROBE_LATENCY_FACTOR: '1000',
      TB_EXPIRER_CONCURRENCY: '1',
      TB_EXPIRER_BATCH_SIZE: '500',
    },
  });
  running = await pipeline.start(['expirer']);
});

/** Ends this file's sleeping statements (its own database's connections only), so their pool can close. */
async function wakeSleepers(): Promise<void> {
  const [rows] = (await db.db.raw("SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE 'SELECT SLEEP(%'", [db.name])) as [
    Array<{ id: number }>,
  ];
  for (const { id } of rows) await db.db.raw(`KILL QUERY ${Number(id)}`);
}

afterAll(async () => {
  if (sleepers !== undefined) await wakeSleepers().catch(() => undefined);
  await sleepers?.destroy();
  await pipeline?.stopAll();
  await db?.drop();
});

const gauge = (name: string) => pipeline.metrics.registry.getSingleMetric(name) as Parameters<typeof metricSum>[0];

/**
 * `n` rows due from 5 s on, 1 ms apart (id order is due order), and their entries on the rings.
 * Returns each row's partition (`topic/partition`). Due ahead, so that entries normally reach the
 * expirer before any is due; but a partition read late (a produce retried on a busy broker ate
 * the 5 s in a CI run) lets another partition's later-due rows fire first, which says nothing of
 * the pacer. Order is therefore judged within each partition, where arrival is due order.
 */
async function burst(n: number): Promise<Map<string, string>> {
  const [[{ base }]] = (await db.db.raw("SELECT DATE_FORMAT(NOW(3) + INTERVAL 5 SECOND, '%Y-%m-%d %H:%i:%s.%f') AS base")) as [[{ base: string }]];
  // In statements of 1,000 (a recursive CTE's default depth on both servers).
  for (let from = 0; from < n; from += 1_000) {
    await db.db.raw(
      `INSERT INTO passes (status, close_at)
       WITH RECURSIVE seq (i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
       SELECT 'OPEN', CAST(? AS DATETIME(3)) + INTERVAL i * 1000 MICROSECOND FROM seq`,
      [from, Math.min(n, from + 1_000) - 1, base],
    );
  }
  const rows = (await db.db('passes').select('id', db.db.raw('ROUND(UNIX_TIMESTAMP(close_at) * 1000) AS ms'))) as Array<{
    id: number | string;
    ms: number | string;
  }>;
  const now = Date.now();
  const records = rows.map((r) =>
    bucketRecord(pipeline.topology, catalogue, { entity: 'pass', transition: 'closed', id: String(r.id), expireAtMs: Number(r.ms) }, now),
  );
  const producer = createKafka(pipeline.config.kafka, logger, '-test-pacing').producer();
  await producer.connect();
  try {
    await producer.sendBatch({ acks: -1, topicMessages: byTopic(records) });
  } finally {
    await producer.disconnect();
  }
  return new Map(rows.map((r, i) => [String(r.id), `${records[i]!.topic}/${records[i]!.partition}`]));
}

test('under a raised Threads_running the pacer backs off on it, the budget sets the rate, and every row still transitions once, in due order, within its budget', async () => {
  // Connections of this file's own, each running a statement for as long as the test.
  sleepers = createDb({ ...stackConfig.db, poolMax: SLEEPERS }, { database: db.name, statementTimeoutMs: 0 });
  for (let i = 0; i < SLEEPERS; i += 1) void sleepers.raw('SELECT SLEEP(300)').catch(() => undefined);
  await waitFor(
    'the pacer to back off on threads_running',
    async () => ((await metricSum(gauge('timebucket_pacing_limited_by'), { database: 'main', signal: 'threads_running' })) === 1 ? true : undefined),
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  expect(await metricSum(gauge('timebucket_pacing_state'), { database: 'main', state: 'healthy' })).toBe(0);
  // /readyz says so, and stays ready.
  const readiness = processReadiness(running, { joined: true, stopping: false });
  expect(readiness.details['pacing']).toMatchObject({ main: { state: 'backing-off', limitedBy: 'threads_running' } });

  const partitionOf = await burst(ROWS);
  const seen = new Set<string>();
  await waitFor(
    'every row closed',
    async () => {
      for (const state of ['backing-off', 'budget-bound'])
        if ((await metricSum(gauge('timebucket_pacing_state'), { database: 'main', state })) === 1) seen.add(state);
      return (await countInStatus(db.db, 'passes', 'CLOSED')) === ROWS ? true : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  // The budget, not health, set the rate while the burst drained.
  expect(seen).toContain('budget-bound');

  const rows = (await db
    .db('passes')
    .select('id', db.db.raw('TIMESTAMPDIFF(MICROSECOND, close_at, closed_at) AS lateUs'), db.db.raw('closed_at'))
    .orderBy('close_at')
    .orderBy('id')) as Array<{ id: number | string; lateUs: number | string; closed_at: Date }>;
  // Never early, within the budget.
  expect(rows.filter((r) => Number(r.lateUs) < 0)).toEqual([]);
  expect(rows.filter((r) => Number(r.lateUs) > BUDGET_S * 1_000_000)).toEqual([]);
  // In due order: one batch at a time, so a later-due row never closed before an earlier-due one
  // of its partition (rows are listed in due order).
  const lastClosed = new Map<string, number>();
  const inversions = rows.filter((r) => {
    const partition = partitionOf.get(String(r.id))!;
    const before = lastClosed.get(partition) ?? Number.NEGATIVE_INFINITY;
    lastClosed.set(partition, Math.max(before, r.closed_at.getTime()));
    return r.closed_at.getTime() < before;
  });
  expect(partitionOf.size).toBe(ROWS);
  expect(new Set(partitionOf.values()).size).toBeGreaterThan(1);
  expect(inversions).toEqual([]);
  // Once each: one event per row.
  const [outbox] = (await db.db('event_outbox').count({ rows: '*' }).countDistinct({ keys: 'event_key' })) as Array<{
    rows: number | string;
    keys: number | string;
  }>;
  expect({ rows: Number(outbox!.rows), keys: Number(outbox!.keys) }).toEqual({ rows: ROWS, keys: ROWS });
}, 240_000);

test('the signals read on the second server: Threads_running, and the history list where the account may read it', async () => {
  const second = createDb(secondServer(), { database: null });
  try {
    const { flavour } = await serverFlavour(second);
    const signals = await pacerSignalReader({ two: second }, logger)('two');
    expect(signals.threadsRunning).toBeGreaterThanOrEqual(1);
    // MariaDB gives it to any account; MySQL through INNODB_METRICS, to an account with PROCESS.
    if (flavour === 'mariadb') expect(signals.historyListLength).toBeGreaterThanOrEqual(0);
    else expect(signals.historyListLength === undefined || signals.historyListLength >= 0).toBe(true);
  } finally {
    await second.destroy();
  }
});
