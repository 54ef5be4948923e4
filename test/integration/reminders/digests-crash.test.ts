/**
 * `kill -9` the expirer while it writes a burst of digests, and start two in its place (which
 * rebalance the partitions between them as they join): they re-read from the last committed
 * offsets and run the same digests again, under the same keys,
 * so each (user, fire point, window) has exactly one digest, listing every coupon of the user's
 * window. The expirer runs as a real `timebucket run --roles expirer` process from dist/.
 *
 * @lane isolated
 */
import type { ChildProcess } from 'node:child_process';
import { parseEntityFile } from '../../../src/core/entity-file';
import { outboxEvents } from '../../support/outbox-rows';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import type { TestPipeline } from '../../support/pipeline';
import type { TestDatabase } from '../../support/test-database';
import { spawnCli } from '../../support/cli';
import { waitFor } from '../../support/wait-for';
import { remindingFile } from '../../unit/reminders/reminder-files';

const WINDOW = 2_000;
// Room for the killed expirer's successors to start and join before the coupons fall due: a
// digest read after that finds them due and lists nothing (never a reminder after the due time).
const BEFORE = 20_000;
const USERS = 400;
const PER_USER = 3;
const entities = remindingFile('digest', { before: ['20s'], window: '2s' });
const catalogue = parseEntityFile(entities, 'digests-crash.json');

let own: OwnDatabasePipeline;
let database: TestDatabase;
let pipeline: TestPipeline;
const children: ChildProcess[] = [];

function startExpirer(): ChildProcess {
  // Small batches, so the burst takes many transactions and the kill lands among them.
  const { child } = spawnCli(['run', '--roles', 'expirer'], {
    ...pipeline.env,
    TB_LOG_LEVEL: 'warn',
    TB_HTTP_PORT: '0',
    TB_EXPIRER_BATCH_SIZE: '10',
    TB_EXPIRER_CONCURRENCY: '1',
  });
  children.push(child);
  return child;
}

const digests = () => outboxEvents(database.db, catalogue).then((es) => es.filter((e) => e.eventType === 'USER_COUPONS_EXPIRING_SOON'));

beforeAll(async () => {
  // No outbox connector: the digests stay in event_outbox, where the test reads them.
  own = await ownDatabasePipeline('digests-crash', entities, { outbox: false });
  ({ database, pipeline } = own);
  await pipeline.start(['repartitioner', 'cascader']);
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await own?.stop();
});

test('kill -9 among the digests of a window, two expirers in its place: one digest per user, each complete', async () => {
  const first = startExpirer();
  const [now] = ((await database.db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>])[0];
  const windowStart = Math.ceil((now!.now.getTime() + 4_000) / WINDOW) * WINDOW;
  const rows = Array.from({ length: USERS * PER_USER }, (_, i) => ({
    user_id: 5_000 + (i % USERS),
    status: 'ACTIVE',
    expire_time: new Date(windowStart + BEFORE + 100 + (i % 17) * 100),
    face_value: '1.00',
  }));
  await database.db('coupons').insert(rows);

  await waitFor('the first digests written', async () => ((await digests()).length >= 10 ? true : undefined), { timeoutMs: 30_000, intervalMs: 20 });
  first.kill('SIGKILL');
  await waitFor('the first expirer to die', () => (first.signalCode === 'SIGKILL' ? true : undefined));
  const atKill = (await digests()).length;
  expect(atKill).toBeLessThan(USERS);

  // Two in its place: their joining rebalances the partitions between them while they catch up.
  startExpirer();
  startExpirer();
  await waitFor('a digest for every user', async () => ((await digests()).length >= USERS ? true : undefined), { timeoutMs: 60_000, intervalMs: 250 });
  const all = await digests();
  expect(all).toHaveLength(USERS);
  expect(new Set(all.map((d) => d.entityId)).size).toBe(USERS);
  for (const d of all) {
    expect(d.eventKey).toBe(`coupon-expired-digest-${d.entityId}-${BEFORE}-${windowStart}-1`);
    expect((d.payload['items'] as unknown[]).length).toBe(PER_USER);
  }
});
