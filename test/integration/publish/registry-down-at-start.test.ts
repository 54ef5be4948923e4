/**
 * The schema registry is not a start-up dependency of transitions: a process started with every
 * role while the registry cannot be reached starts, expires what is due on time, and holds only
 * publishing (with no schema id yet, router mode defers the events to the relay's outbox); once
 * the registry is back, they are published. Down again mid-flow, it holds nothing: the schema
 * ids are known, the events are encoded in the transaction and the router publishes them.
 * (A registry that refuses the credentials still stops start-up, named: ops/secure-connections.)
 *
 * @lane exclusive
 */
import { createDb, Db } from '../../../src/db/knex';
import type { Running } from '../../../src/main';
import { collectEvents } from '../../support/events';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { config } from '../../support/stack';
import { stackUp, stopRegistry } from '../../support/stack-control';
import { waitFor } from '../../support/wait-for';
import { metricSum } from '../../support/counts';

let db: Db;
let pipeline: TestPipeline;
const marker = 7_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

beforeAll(async () => {
  db = createDb(config.db);
  pipeline = await createTestPipeline();
});

afterAll(async () => {
  await pipeline.stopAll();
  await db.destroy();
  stackUp(); // the registry back for the next test, whatever happened
});

test('with the registry down at start, every role starts, due coupons expire on time, and their events follow once it is back', async () => {
  await stopRegistry();
  const running: Running = await pipeline.start();
  const rows = Array.from({ length: 20 }, (_, i) => ({ user_id: marker, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [(1_500 + i * 100) * 1000]) }));
  const [first] = await db('coupons').insert(rows);
  const ids = rows.map((_, i) => first! + i);
  await waitFor(
    'every coupon expired while the registry is down',
    async () => (Number((await db('coupons').whereIn('id', ids).where({ status: 'EXPIRED' }).count({ n: '*' }))[0]!.n) === ids.length ? true : undefined),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const early = await db('coupons').whereIn('id', ids).whereRaw('expired_at < expire_time').select('id');
  expect(early).toEqual([]);
  // Written with the transition. The schemas of this pipeline's topics were never registered,
  // so no saved id fits: the router defers each event to the relay's outbox, which waits.
  expect(await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids })).toEqual({ rows: ids.length, keys: ids.length });
  expect(await metricSum(pipeline.metrics.outboxDeferred)).toBe(ids.length);
  expect(await metricSum(pipeline.metrics.missingSchemaIds)).toBe(pipeline.catalogue.events.length);
  expect(Number((await db('outbox').where({ entity_type: 'coupon' }).whereIn('entity_id', ids).whereNotNull('published_at').count({ n: '*' }))[0]!.n)).toBe(0);
  expect(running.health()).toMatchObject({ ok: true });

  stackUp();
  const events = await collectEvents(pipeline.config, [pipeline.topology.events.find((e) => e.type === 'COUPON_EXPIRED')!.topic]);
  try {
    const published = (of: readonly number[]) => {
      const keys = new Set(of.map(String));
      return new Set(events.events.filter((e) => keys.has(e.key)).map((e) => e.headers['event_key'])).size;
    };
    await waitFor('every event published once the registry is back', () => (published(ids) === ids.length ? true : undefined), { timeoutMs: 90_000, intervalMs: 250 });
    expect(events.undecodable).toEqual([]);
    // The expirer's own registration retries with backoff (up to 10 s): until it succeeds its
    // events still go the relay's way. Once it has every id, none does.
    await waitFor('every schema id known to the expirer', async () => ((await metricSum(pipeline.metrics.missingSchemaIds)) === 0 ? true : undefined), { timeoutMs: 30_000, intervalMs: 250 });

    // Mid-flow: the schemas are registered and their ids known, so an outage holds nothing: the
    // events are encoded in the transaction and the router publishes them.
    await stopRegistry();
    const more = Array.from({ length: 10 }, () => ({ user_id: marker, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 1 SECOND') }));
    const [next] = await db('coupons').insert(more);
    const moreIds = more.map((_, i) => next! + i);
    await waitFor('the next coupons expired and published with the registry down again', () => (published(moreIds) === moreIds.length ? true : undefined), { timeoutMs: 60_000, intervalMs: 250 });
    expect(await metricSum(pipeline.metrics.outboxDeferred)).toBe(ids.length);
    expect(events.undecodable).toEqual([]);
  } finally {
    await events.stop();
  }
}, 240_000);
