/**
 * One sick database holds only its own work, however long it is away. Entity `beta` lives on
 * database `b`, reached through a proxy this file freezes (it neither answers nor refuses);
 * `alpha` lives on the main database. Both spread their entries over every due-lane partition,
 * and each partition may hold only TB_MAX_IN_MEMORY_PER_PARTITION unfinished entries.
 *
 * With `b` frozen, more of beta's due entries than the cap lands on every partition, then
 * alpha's behind them: beta's move to b's waiting lane (`<prefix>.waiting.b`), so the partitions
 * go on and every alpha row transitions while `b` is still away. (Held in memory instead, beta's
 * entries would stop every partition at the cap, and alpha with them, for as long as `b` is.)
 * Thawed, every beta row transitions once.
 *
 * @lane isolated
 */
import { bucketRecord, byTopic } from '../../../src/core/bucket-record';
import { parseEntityFile } from '../../../src/core/entity-file';
import { createKafka } from '../../../src/kafka/client';
import { countInStatus, metricSum } from '../../support/counts';
import { startFreezableProxy, type FreezableProxy } from '../../support/freezable-proxy';
import { createTestPipeline, type TestPipeline } from '../../support/pipeline';
import { config as stackConfig, logger } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';

const entity = (name: string, table: string, database: string) => ({
  name,
  locations: [{ database, table }],
  id: 'id',
  status: { column: 'status', type: 'string', values: ['OPEN', 'CLOSED'] },
  transitions: [
    {
      name: 'closed',
      from: ['OPEN'],
      to: 'CLOSED',
      due: { column: 'close_at', kind: 'datetime' },
      index: `idx_${table}_status_close_id`,
      event: {
        type: `${name.toUpperCase()}_CLOSED`,
        ceType: `test.${name}.closed`,
        avroName: `test.events.${name[0]!.toUpperCase()}${name.slice(1)}Closed`,
        idField: `${name}_id`,
        summary: `A ${name} closed.`,
      },
    },
  ],
});
const entities = { entities: [entity('alpha', 'alphas', 'main'), entity('beta', 'betas', 'b')] };
const catalogue = parseEntityFile(entities, 'sick-database entities');

/** Unfinished entries a partition may hold: far fewer than beta puts on each of the four. */
const CAP = 10;
const BETA_ROWS = 200;
const ALPHA_ROWS = 40;

let main: TestDatabase;
let b: TestDatabase;
let proxy: FreezableProxy;
let pipeline: TestPipeline;

async function createTable(db: TestDatabase, table: string): Promise<void> {
  await db.db.raw(`CREATE TABLE ${table} (
    id BIGINT PRIMARY KEY AUTO_INCREMENT,
    status VARCHAR(16) NOT NULL,
    close_at DATETIME(3) NOT NULL,
    KEY idx_${table}_status_close_id (status, close_at, id)
  )`);
}

type Due = Readonly<{ id: string; ms: number }>;

/** `n` rows already due by the database clock: their ids and due times. */
async function dueRows(db: TestDatabase, table: string, n: number): Promise<Due[]> {
  for (let i = 0; i < n; i += 1) await db.db(table).insert({ status: 'OPEN', close_at: db.db.raw('NOW(3) - INTERVAL 1 SECOND') });
  const rows = (await db.db(table).select('id', db.db.raw('ROUND(UNIX_TIMESTAMP(close_at) * 1000) AS ms'))) as Array<{
    id: number | string;
    ms: number | string;
  }>;
  return rows.map((r) => ({ id: String(r.id), ms: Number(r.ms) }));
}

/** Their entries on the due lane, as the repartitioner writes them (shard = key, spread over the partitions). */
async function appendDue(name: string, rows: readonly Due[]): Promise<void> {
  const now = Date.now();
  const records = rows.map((r) => bucketRecord(pipeline.topology, catalogue, { entity: name, transition: 'closed', id: r.id, expireAtMs: r.ms }, now));
  const producer = createKafka(pipeline.config.kafka, logger, '-test-sick-db').producer();
  await producer.connect();
  try {
    await producer.sendBatch({ acks: -1, topicMessages: byTopic(records) });
  } finally {
    await producer.disconnect();
  }
}

beforeAll(async () => {
  main = await createTestDatabase('sick-main');
  b = await createTestDatabase('sick-b');
  await createTable(main, 'alphas');
  await createTable(b, 'betas');
  proxy = await startFreezableProxy({ host: stackConfig.db.host, port: stackConfig.db.port });
  pipeline = await createTestPipeline({
    entities,
    env: {
      TB_DB_NAME: main.name,
      TB_DATABASES: 'b',
      TB_DB_B_HOST: '127.0.0.1',
      TB_DB_B_PORT: String(proxy.port),
      TB_DB_B_NAME: b.name,
      TB_MAX_IN_MEMORY_PER_PARTITION: String(CAP),
      // A frozen database's statements give up after 3 s (its breaker opens then), not the default 15 s.
      TB_DB_STATEMENT_TIMEOUT_MS: '3000',
      TB_DB_LOCK_WAIT_TIMEOUT_S: '2',
      TB_DB_PING_INTERVAL_MS: '1000',
    },
  });
  await pipeline.start(['expirer']);
});

afterAll(async () => {
  proxy?.thaw();
  await pipeline?.stopAll();
  await proxy?.close();
  await Promise.allSettled([main?.drop(), b?.drop()]);
});

test("a database away for longer than the memory cap takes to fill holds only its own entries: the other database's go on, and its own transition once when it is back", async () => {
  const beta = await dueRows(b, 'betas', BETA_ROWS);
  const alpha = await dueRows(main, 'alphas', ALPHA_ROWS);
  const betaIds = beta.map((r) => r.id);
  const alphaIds = alpha.map((r) => r.id);
  proxy.freeze();
  await appendDue('beta', beta);
  // Behind beta's entries in every partition.
  await appendDue('alpha', alpha);

  await waitFor(
    'every alpha row closed while b is away',
    async () => ((await countInStatus(main.db, 'alphas', 'CLOSED', alphaIds)) === ALPHA_ROWS ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 250,
    },
  );
  expect(await countInStatus(b.db, 'betas', 'CLOSED', betaIds)).toBe(0);
  expect(await metricSum(pipeline.metrics.movedToWaiting, { entity: 'beta' })).toBeGreaterThanOrEqual(BETA_ROWS - 4 * CAP);
  expect(await metricSum(pipeline.metrics.movedToWaiting, { entity: 'alpha' })).toBe(0);

  proxy.thaw();
  await waitFor(
    'every beta row closed once b is back',
    async () => ((await countInStatus(b.db, 'betas', 'CLOSED', betaIds)) === BETA_ROWS ? true : undefined),
    {
      timeoutMs: 90_000,
      intervalMs: 250,
    },
  );
  // One outbox row, one event_key, per transition.
  const [outbox] = (await b.db('event_outbox').count({ rows: '*' }).countDistinct({ keys: 'event_key' })) as Array<{
    rows: number | string;
    keys: number | string;
  }>;
  expect({ rows: Number(outbox!.rows), keys: Number(outbox!.keys) }).toEqual({ rows: BETA_ROWS, keys: BETA_ROWS });
  expect(await metricSum(pipeline.metrics.parked)).toBe(0);
}, 240_000);
