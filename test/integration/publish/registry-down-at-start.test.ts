/**
 * The schema registry is not a dependency of `run`: `timebucket schemas register` (a deployment
 * step) saves the schema ids, and the processes read them. With the ids saved and the registry
 * down for the whole run, every role starts, due coupons expire on time and their events are
 * published, encoded in the transaction. (Without saved ids, transitions wait:
 * publish/schema-ids-missing.test.ts. A registry that refuses the credentials fails `schemas
 * register`, named: ops/secure-connections.)
 *
 * @lane exclusive
 */
import { createDb, Db } from '../../../src/db/knex';
import type { Running } from '../../../src/main';
import { collectEvents, eventKeysOf } from '../../support/events';
import { outboxCount } from '../../support/outbox-rows';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { config } from '../../support/stack';
import { stackUp, stopRegistry } from '../../support/stack-control';
import { waitFor } from '../../support/wait-for';
import { countInStatus, metricSum } from '../../support/counts';

let db: Db;
let pipeline: TestPipeline;
const marker = 7_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

beforeAll(async () => {
  db = createDb(config.db);
  // Registers the schemas (the deployment's Job), while the registry is up.
  pipeline = await createTestPipeline();
});

afterAll(async () => {
  await pipeline.stopAll();
  await db.destroy();
  stackUp(); // the registry back for the next test, whatever happened
});

test('with the schema ids saved and the registry down for the whole run, every role starts, due coupons expire on time and their events are published', async () => {
  await stopRegistry();
  const running: Running = await pipeline.start();
  const rows = Array.from({ length: 20 }, (_, i) => ({
    user_id: marker,
    status: 'ACTIVE',
    expire_time: db.raw('NOW(3) + INTERVAL ? MICROSECOND', [(1_500 + i * 100) * 1000]),
  }));
  const [first] = await db('coupons').insert(rows);
  const ids = rows.map((_, i) => first! + i);
  await waitFor('every coupon expired', async () => ((await countInStatus(db, 'coupons', 'EXPIRED', ids)) === ids.length ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  expect(await db('coupons').whereIn('id', ids).whereRaw('expired_at < expire_time').select('id')).toEqual([]);
  expect(await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids })).toEqual({ rows: ids.length, keys: ids.length });
  expect(await metricSum(pipeline.metrics.missingSchemaIds)).toBe(0);
  expect(running.health()).toMatchObject({ ok: true });

  // Read back once the registry is back (a subscriber decodes through it): every event was
  // encoded in its transaction with the saved id, and published.
  stackUp();
  const events = await collectEvents(pipeline.config, [pipeline.topology.events.find((e) => e.type === 'COUPON_EXPIRED')!.topic]);
  try {
    await waitFor('every event on the wire', () => (eventKeysOf(events.events, ids).size === ids.length ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect(events.undecodable).toEqual([]);
  } finally {
    await events.stop();
  }
}, 180_000);
