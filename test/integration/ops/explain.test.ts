/**
 * `timebucket explain` against a real database: a row in each situation, each verdict asserted.
 * Due far ahead (the day ring), about to fire (the minute ring), transitioned by the stream and
 * by the scanner (through the expiry transaction itself, the path read back from the event's
 * payload through the registry), paid before its time, overdue and never scheduled (the verdict
 * names the scanner and backfill), not there at all; and the command as an operator runs it.
 * The look on Kafka is ops/explain-wire's.
 *
 * @mysql
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { parseTopology } from '../../../src/core/topology';
import type { OutboxWriter } from '../../../src/publish/outbox-writer';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { eventPathOf, explainRow, type RowExplanation } from '../../../src/cli/explain-command';
import { defaultCatalogue, defaultEntitiesPath } from '../../support/catalogue';
import { spawnCli } from '../../support/cli';
import { eventWriter } from '../../support/event-writer';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

const topologyPath = join(__dirname, '../../../topics/production.json');
const topology = parseTopology(readFileSync(topologyPath, 'utf8'), topologyPath);
const expired = transitionOf(defaultCatalogue, 'coupon', 'expired');
let own: TestDatabase;
let outbox: OutboxWriter;
let env: Record<string, string>;
const pathOf = eventPathOf(loadConfig(process.env).registry);

beforeAll(async () => {
  own = await createTestDatabase('explain');
  outbox = await eventWriter(own.db, defaultCatalogue);
  env = { TB_DB_NAME: own.name, TB_ENTITIES: defaultEntitiesPath, TB_TOPOLOGY: topologyPath, TB_LOG_LEVEL: 'warn' };
});

afterAll(async () => {
  await own?.drop();
});

/** A coupon in `status`, due `dueSql` (an expression on the database clock). */
async function coupon(status: string, dueSql: string): Promise<string> {
  const [id] = await own.db('coupons').insert({ user_id: 7, face_value: 5, status, expire_time: own.db.raw(dueSql) });
  return String(id);
}

async function explained(id: string): Promise<RowExplanation & { found: true }> {
  const e = await explainRow(loadConfig({ ...process.env, ...env }), topology, defaultCatalogue, 'coupon', id, { pathOf });
  if (!e.found) throw new Error(`coupon ${id} not found`);
  return e;
}

test('scheduled far ahead and about to fire: where the entry belongs; paid before its time: not expirable', async () => {
  const far = await explained(await coupon('ACTIVE', 'NOW(3) + INTERVAL 3 DAY + INTERVAL 2 HOUR'));
  expect(far.transitions[0]).toMatchObject({ transition: 'expired', state: 'scheduled', placement: { lane: 'ring', tier: 'day' } });
  expect(far.transitions[0]!.verdict).toMatch(/^due in 3 d [12] h by the database clock; its entry belongs in the day ring's topic tb\.day\.\d{3} /);

  const soon = await explained(await coupon('ACTIVE', 'NOW(3) + INTERVAL 10 MINUTE'));
  expect(soon.transitions[0]).toMatchObject({ state: 'scheduled', placement: { lane: 'ring', tier: 'minute' } });
  expect(soon.transitions[0]!.verdict).toMatch(
    /^due in (9 min \d+ s|10 min) by the database clock; its entry belongs in the minute ring's topic tb\.minute\.\d{3} \(bucket /,
  );

  const paid = await explained(await coupon('USED', 'NOW(3) + INTERVAL 1 HOUR'));
  expect(paid.transitions[0]).toMatchObject({ state: 'not expirable', verdict: 'not expirable: status USED, and expired moves it only from ACTIVE' });
});

test('transitioned by the stream and by the scanner: how late, and the path its event says', async () => {
  const batches = createTransitionBatches(own.db, defaultCatalogue, { outbox });
  for (const path of ['stream', 'scanner'] as const) {
    const id = await coupon('ACTIVE', 'NOW(3) - INTERVAL 2 SECOND');
    const due = ((await own.db('coupons').where({ id }).first()) as { expire_time: Date }).expire_time.getTime();
    const result = await batches.run(expired, [{ id, expireAtMs: due }], path);
    expect(result.transitioned).toHaveLength(1);
    const e = await explained(id);
    const key = `coupon-expired-${id}-${due}-${result.dbNowMs}`;
    expect(e.transitions[0]).toMatchObject({ state: 'transitioned', status: 'EXPIRED' });
    expect(e.transitions[0]!.verdict).toMatch(new RegExp(`^moved [0-9a-z ]+ after due by ${path} at .*; event ${key} on `));
  }
});

test('overdue and never scheduled (no change captured, no scanner yet): the verdict says what takes it', async () => {
  const e = await explained(await coupon('ACTIVE', 'NOW(3) - INTERVAL 5 MINUTE'));
  expect(e.transitions[0]).toMatchObject({ state: 'overdue', placement: { lane: 'due', topic: 'tb.due' } });
  expect(e.transitions[0]!.verdict).toMatch(
    /^due 5 min( \d+ s)? ago by the database clock and not transitioned: .* the scanner takes it once it is overdue by TB_SCANNER_GRACE_MS, or run backfill$/,
  );
});

test('the command: a line per transition; no such row exits 1; a bad id or entity is a usage error', async () => {
  const id = await coupon('ACTIVE', 'NOW(3) + INTERVAL 3 HOUR');
  const run = spawnCli(['explain', 'coupon', id, '--no-wire'], env);
  expect((await run.exited).code).toBe(0);
  const lines = run.stdout().trim().split('\n');
  expect(lines[0]).toMatch(new RegExp(`^coupon ${id} in main\\.coupons, database clock `));
  expect(lines[1]).toMatch(
    /^ {2}expired \(status ACTIVE, due .*\): due in (2 h \d+ min|3 h) by the database clock; its entry belongs in the hour ring's topic tb\.hour\.\d{2} /,
  );

  const json = spawnCli(['explain', 'coupon', id, '--json', '--no-wire'], env);
  expect((await json.exited).code).toBe(0);
  expect(JSON.parse(json.stdout())).toMatchObject({ entity: 'coupon', id, found: true, transitions: [{ state: 'scheduled', placement: { tier: 'hour' } }] });

  const missing = spawnCli(['explain', 'coupon', '9999999999'], env);
  expect((await missing.exited).code).toBe(1);
  expect(missing.stdout()).toContain('coupon 9999999999: no such row in main.coupons');
  const badId = spawnCli(['explain', 'coupon', '12x'], env);
  expect((await badId.exited).code).toBe(64);
  const badEntity = spawnCli(['explain', 'voucher', '1'], env);
  expect((await badEntity.exited).code).toBe(64);
  expect(badEntity.stderr()).toContain("no entity 'voucher' (entities: coupon, order)");
});
