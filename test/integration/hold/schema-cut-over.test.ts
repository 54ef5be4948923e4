/**
 * An online schema change's cut-over (gh-ost, pt-online-schema-change) makes the table missing
 * (1146) or a column unknown (1054) for a moment. Such an error is the same for every row and
 * goes away by itself: the expirer rides it out, retrying its batches for some seconds, and parks
 * nothing. Here the table is renamed away when its first due batch fails, for three seconds
 * (the fault's length, longer than the few hundred milliseconds in which three tries alone
 * used to park every entry), then renamed back: every row transitions, none is dead-lettered.
 *
 * @mysql
 * @lane isolated
 */
import { countInStatus, metricSum } from '../../support/counts';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import { waitFor } from '../../support/wait-for';

const entities = {
  entities: [
    {
      name: 'notice',
      table: 'notices',
      id: 'id',
      status: { column: 'status', type: 'string', values: ['OPEN', 'CLOSED'] },
      transitions: [
        {
          name: 'closed',
          from: ['OPEN'],
          to: 'CLOSED',
          due: { column: 'close_at', kind: 'datetime' },
          index: 'idx_notices_status_close_id',
          event: {
            type: 'NOTICE_CLOSED',
            ceType: 'test.notice.closed',
            avroName: 'test.events.NoticeClosed',
            idField: 'notice_id',
            summary: 'A notice closed.',
          },
        },
      ],
    },
  ],
};

/** How long the table stays away: a cut-over's moment, as the fault, not a synchronisation. */
const AWAY_MS = 3_000;

let own: OwnDatabasePipeline;

beforeAll(async () => {
  own = await ownDatabasePipeline('cut-over', entities, {
    outbox: false,
    tables: async (db) => {
      await db.raw(`CREATE TABLE notices (
        id BIGINT PRIMARY KEY AUTO_INCREMENT,
        status VARCHAR(16) NOT NULL,
        close_at DATETIME(3) NOT NULL,
        KEY idx_notices_status_close_id (status, close_at, id)
      )`);
    },
  });
});

afterAll(async () => {
  await own?.stop();
});

test('a table missing for a moment while its rows are due: the batches wait it out, nothing is parked, every row transitions once', async () => {
  const { pipeline, database } = own;
  const db = database.db;
  await pipeline.start(['repartitioner', 'expirer']);
  const ids: number[] = [];
  for (let i = 0; i < 20; i += 1) ids.push((await db('notices').insert({ status: 'OPEN', close_at: db.raw('NOW(3) + INTERVAL 2 SECOND') }))[0]!);
  // Debezium has read the inserts when the table goes: their change events are in the CDC topic.
  await waitFor('the rows routed', async () => ((await metricSum(pipeline.metrics.routed)) >= ids.length ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  await db.raw('RENAME TABLE notices TO notices_cut_over');
  try {
    await waitFor(
      'a batch failing on the missing table',
      async () => ((await metricSum(pipeline.metrics.batchFailures, { entity: 'notice' })) > 0 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 50,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, AWAY_MS));
  } finally {
    await db.raw('RENAME TABLE notices_cut_over TO notices');
  }
  const parked = () => metricSum(pipeline.metrics.parked, { entity: 'notice' });
  // A parked entry never closes its row: stop waiting at the first one.
  await waitFor(
    'every row closed (or one parked)',
    async () => ((await parked()) > 0 || (await countInStatus(db, 'notices', 'CLOSED', ids)) === ids.length ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 250,
    },
  );
  expect(await parked()).toBe(0);
  expect(await countInStatus(db, 'notices', 'CLOSED', ids)).toBe(ids.length);
  expect(await metricSum(pipeline.metrics.transitions, { entity: 'notice' })).toBe(ids.length);
}, 180_000);
