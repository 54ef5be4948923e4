/**
 * The schema registry is not a start-up dependency of transitions: a process started with every
 * role while the registry cannot be reached starts, expires what is due on time, and holds only
 * publishing; once the registry is back, the events waiting in the outbox are published. Down
 * again mid-flow, it holds nothing: the schema ids are known.
 * (A registry that refuses the credentials still stops start-up, named: ops/secure-connections.)
 */
import { createDb, Db } from '../../../src/db/knex';
import type { Running } from '../../../src/main';
import { collectEvents } from '../../support/events';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { config } from '../../support/stack';
import { stackUp, stopRegistry } from '../../support/stack-control';
import { waitFor } from '../../support/wait-for';

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
  const outbox = () => db('outbox').where({ entity_type: 'coupon' }).whereIn('entity_id', ids);
  // Written with the transition, and not published: the relay waits for the registry.
  expect(Number((await outbox().clone().count({ n: '*' }))[0]!.n)).toBe(ids.length);
  expect(Number((await outbox().clone().whereNotNull('published_at').count({ n: '*' }))[0]!.n)).toBe(0);
  expect(running.health()).toMatchObject({ ok: true });

  stackUp();
  await waitFor(
    'every event published once the registry is back',
    async () => (Number((await outbox().clone().whereNotNull('published_at').count({ n: '*' }))[0]!.n) === ids.length ? true : undefined),
    { timeoutMs: 90_000, intervalMs: 500 },
  );
  const events = await collectEvents(pipeline.config, [pipeline.topology.events.find((e) => e.type === 'COUPON_EXPIRED')!.topic]);
  try {
    const keys = new Set(ids.map(String));
    await waitFor('the events on their topic, decodable', () => (events.events.filter((e) => keys.has(e.key)).length >= ids.length ? true : undefined), { timeoutMs: 30_000, intervalMs: 250 });
    expect(events.undecodable).toEqual([]);
    expect(new Set(events.events.filter((e) => keys.has(e.key)).map((e) => e.headers['event_key'])).size).toBe(ids.length);
  } finally {
    await events.stop();
  }

  // Mid-flow: the schemas are registered and their ids known, so an outage holds nothing.
  await stopRegistry();
  const more = Array.from({ length: 10 }, () => ({ user_id: marker, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 1 SECOND') }));
  const [next] = await db('coupons').insert(more);
  const moreIds = more.map((_, i) => next! + i);
  await waitFor(
    'the next coupons expired and published with the registry down again',
    async () => (Number((await db('outbox').where({ entity_type: 'coupon' }).whereIn('entity_id', moreIds).whereNotNull('published_at').count({ n: '*' }))[0]!.n) === moreIds.length ? true : undefined),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}, 240_000);
