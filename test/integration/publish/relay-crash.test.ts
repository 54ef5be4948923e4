/**
 * `kill -9` a relay process running several loops mid-flight and start another: every outbox
 * row is published, none lost; the only duplicates on the wire are rows that were in flight at
 * the kill (sent, not yet marked); each entity's events arrive first in outbox order. The relay
 * runs as a real `timebucket run --roles relay` process from dist/, on a database of this file's
 * own (so no other relay takes these rows) and event topics of its own.
 *
 * @lane isolated
 */
import { writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin, Kafka } from 'kafkajs';
import type { Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { spawnCli, CliRun, killRunning } from '../../support/cli';
import { config, logger, uniqueName } from '../../support/stack';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { waitFor } from '../../support/wait-for';
import { entityIds, insertCouponEvents } from './outbox-fixtures';
import { createTestTopics } from '../../support/topics';
import { defaultEventTopic } from '../../../src/core/event-catalogue';

const LOOPS = 3;
const BATCH = 10;
const ENTITIES = 500;
const ROUNDS = 10;
const TOTAL = ENTITIES * ROUNDS;

let testDb: TestDatabase;
let db: Db;
let kafka: Kafka;
let admin: Admin;
let env: Record<string, string>;
let topic: string;
const runs: CliRun[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase('relay_crash');
  db = testDb.db;
  kafka = createKafka(config.kafka, logger, '-test');
  admin = kafka.admin();
  await admin.connect();
  // The test topology, with event topics of this file's own.
  const prefix = uniqueName('tbrc').replace(/-/g, '');
  const raw = JSON.parse(readFileSync(join(__dirname, '../../../topics/test.json'), 'utf8')) as { prefix: string; events: Array<{ type: string; topic: string }> };
  raw.prefix = prefix;
  for (const e of raw.events) e.topic = defaultEventTopic({ prefix }, e.type);
  topic = raw.events.find((e) => e.type === 'COUPON_EXPIRED')!.topic;
  await createTestTopics(admin, raw.events.map((e) => ({ topic: e.topic, numPartitions: 3 })));
  const topologyPath = join(tmpdir(), `${prefix}.json`);
  writeFileSync(topologyPath, JSON.stringify(raw));
  env = {
    // The polling relay's own mode: in router mode the relay role publishes nothing.
    TB_PUBLISH_MODE: 'relay',
    TB_DB_NAME: testDb.name,
    TB_TOPOLOGY: topologyPath,
    TB_GROUP_PREFIX: prefix,
    TB_RELAY_CONCURRENCY: String(LOOPS),
    TB_RELAY_BATCH_SIZE: String(BATCH),
    // Short, so the rows the killed process held are taken over quickly.
    TB_RELAY_LEASE_MS: '2000',
    TB_RELAY_IDLE_MS: '50',
    TB_HTTP_PORT: '0',
    TB_LOG_LEVEL: 'warn',
  };
});

afterAll(async () => {
  killRunning(runs);
  await admin?.disconnect();
  await testDb?.drop();
});

function startRelay(): CliRun {
  const run = spawnCli(['run', '--roles', 'relay'], env);
  runs.push(run);
  return run;
}

async function published(): Promise<number> {
  const [[{ n }]] = (await db.raw('SELECT COUNT(*) AS n FROM outbox WHERE published_at IS NOT NULL')) as [[{ n: number }]];
  return Number(n);
}

/** Every message on the topic, in partition order: [entity id, event_key]. */
async function readTopic(): Promise<Array<[string, string]>> {
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  const seen = new Map<number, number>();
  const messages: Array<[string, string]> = [];
  const consumer = kafka.consumer({ groupId: uniqueName('tb-relay-crash-read'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        messages.push([message.key!.toString(), message.headers!['event_key']!.toString()]);
        seen.set(partition, Number(message.offset) + 1);
      },
    });
    await waitFor('the topic read to its end', () => ([...ends].every(([p, end]) => (seen.get(p) ?? 0) >= end) ? true : undefined));
  } finally {
    await consumer.disconnect();
  }
  return messages;
}

test('kill -9 mid-flight, restart: every row published, duplicates only from the batches in flight, entity order kept', async () => {
  // Ten rounds of events over 500 entities, interleaved.
  const entities = entityIds(ENTITIES);
  await insertCouponEvents(db, Array.from({ length: ROUNDS }, () => entities).flat());
  const rows = (await db('outbox').orderBy('id').select('event_key', 'entity_id')) as Array<{ event_key: string; entity_id: number }>;

  const first = startRelay();
  await waitFor('the first relay to publish a tenth', async () => ((await published()) >= TOTAL / 10 ? true : undefined), { timeoutMs: 60_000, intervalMs: 20 });
  first.child.kill('SIGKILL');
  await waitFor('the first relay to die', () => (first.child.signalCode === 'SIGKILL' ? true : undefined));
  const atKill = await published();
  expect(atKill).toBeLessThan(TOTAL);

  startRelay();
  await waitFor('every row published after the restart', async () => ((await published()) === TOTAL ? true : undefined), { timeoutMs: 90_000, intervalMs: 250 });
  await expect(db('outbox').count({ n: '*' })).resolves.toEqual([{ n: TOTAL }]);
  // Several loops of each process did the work (claimed_by = relay-<instance>/<loop>).
  const owners = (await db('outbox').distinct('claimed_by')) as Array<{ claimed_by: string }>;
  expect(new Set(owners.map((o) => o.claimed_by.replace(/^.*\//, ''))).size).toBeGreaterThan(1);

  const messages = await readTopic();
  const copies = new Map<string, number>();
  for (const [, key] of messages) copies.set(key, (copies.get(key) ?? 0) + 1);
  // Nothing lost; a second copy only of a row the first process held when it was killed.
  expect([...copies.keys()].sort()).toEqual(rows.map((r) => r.event_key).sort());
  const duplicates = messages.length - copies.size;
  // At most the batches the killed process held: one per loop (its locks went with its connection).
  expect(duplicates).toBeLessThanOrEqual(LOOPS * BATCH);
  // Per entity, first copies in outbox order.
  const firstSeen = new Map<string, string[]>();
  const counted = new Set<string>();
  for (const [entity, key] of messages) {
    if (counted.has(key)) continue;
    counted.add(key);
    firstSeen.set(entity, [...(firstSeen.get(entity) ?? []), key]);
  }
  for (const entity of entities) {
    expect(firstSeen.get(entity)).toEqual(rows.filter((r) => String(r.entity_id) === entity).map((r) => r.event_key));
  }
  logger.info(`relay-crash: ${atKill} of ${TOTAL} published at the kill; ${duplicates} duplicates after the restart`);
});
