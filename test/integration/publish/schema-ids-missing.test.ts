/**
 * Nothing moves without its event: a process whose event types have no saved schema id (the
 * deployment's `timebucket schemas register` has not run for these schemas) holds the due
 * transitions, retried, and counts the event types in timebucket_event_schema_ids_missing (the
 * TimebucketEventSchemaIdsMissing alert); no event goes anywhere else. Once the command has run,
 * the same process reads the ids and the held coupons expire, each with its event on the wire.
 *
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import type { Db } from '../../../src/db/knex';
import { defaultEntitiesPath } from '../../support/catalogue';
import { spawnCli } from '../../support/cli';
import { countInStatus, metricSum } from '../../support/counts';
import { collectEvents, eventKeysOf } from '../../support/events';
import { outboxCount } from '../../support/outbox-rows';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import type { TestPipeline } from '../../support/pipeline';
import { waitFor, withTimeout } from '../../support/wait-for';

let own: OwnDatabasePipeline;
let pipeline: TestPipeline;
let db: Db;

beforeAll(async () => {
  own = await ownDatabasePipeline('schema-ids', JSON.parse(readFileSync(defaultEntitiesPath, 'utf8')), { schemas: 'later' });
  ({ pipeline } = own);
  db = own.database.db;
});

afterAll(async () => {
  await own?.stop();
});

test('without saved schema ids due coupons wait, counted; after `timebucket schemas register` they expire, each with its event', async () => {
  const events = await collectEvents(pipeline.config, [pipeline.topology.events.find((e) => e.type === 'COUPON_EXPIRED')!.topic]);
  try {
    await pipeline.start(['repartitioner', 'expirer', 'cascader']);
    expect(await metricSum(pipeline.metrics.missingSchemaIds)).toBe(pipeline.catalogue.events.length);
    const rows = Array.from({ length: 10 }, () => ({ user_id: 42, status: 'ACTIVE', expire_time: db.raw('NOW(3) + INTERVAL 1 SECOND') }));
    const [first] = await db('coupons').insert(rows);
    const ids = rows.map((_, i) => first! + i);

    // The expirer has tried them (a failed batch, retried) and they are still ACTIVE, no event anywhere.
    await waitFor(
      'the expirer to try the due coupons and be held',
      async () => ((await metricSum(pipeline.metrics.batchFailures, { entity: 'coupon' })) >= 2 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 250,
      },
    );
    expect(await countInStatus(db, 'coupons', 'ACTIVE', ids)).toBe(ids.length);
    expect(await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids })).toEqual({ rows: 0, keys: 0 });

    const register = spawnCli(['schemas', 'register'], { ...pipeline.env, TB_LOG_LEVEL: 'warn' });
    const { code } = await withTimeout('timebucket schemas register', register.exited, 60_000);
    expect({ code, stderr: register.stderr() }).toEqual({ code: 0, stderr: '' });
    expect(register.stdout()).toMatch(/^COUPON_EXPIRED: .*\.events\.coupon-expired-value id \d+$/m);
    expect(register.stdout()).toMatch(new RegExp(`^schemas: ${pipeline.catalogue.events.length} registered, ids saved in event_schema_ids$`, 'm'));

    await waitFor('the held coupons expired', async () => ((await countInStatus(db, 'coupons', 'EXPIRED', ids)) === ids.length ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect(await metricSum(pipeline.metrics.missingSchemaIds)).toBe(0);
    expect(await db('coupons').whereIn('id', ids).whereRaw('expired_at < expire_time').select('id')).toEqual([]);
    expect(await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids })).toEqual({ rows: ids.length, keys: ids.length });
    await waitFor('every event on the wire', () => (eventKeysOf(events.events, ids).size === ids.length ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect(events.undecodable).toEqual([]);
  } finally {
    await events.stop();
  }
}, 180_000);
