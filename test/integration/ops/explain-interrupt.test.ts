/**
 * Ctrl-C during `timebucket explain`'s look on Kafka never leaves its throwaway consumer group
 * (`<prefix>.replay.<random>`) behind: the command, run from dist/ as an operator runs it, gets
 * SIGINT at the moment it logs that it sets the group's offsets (kafkajs's setOffsets runs a
 * consumer of the group, which cannot be cut short): the look stops there, the group is deleted
 * and the command exits 130. A second SIGINT, sent once the first has been delivered, does not
 * skip that deletion either.
 *
 * The signals are timed on the command's JSON log lines and on /proc (a signal still pending
 * there has not reached the process yet: two SIGINTs sent back to back could merge into one),
 * not on sleeps.
 *
 * @lane isolated
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Admin, Kafka } from 'kafkajs';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { createKafka } from '../../../src/kafka/client';
import { defaultCatalogue, defaultEntitiesPath } from '../../support/catalogue';
import { isRunning, killRunning, spawnCli, type CliRun } from '../../support/cli';
import { eventWriter } from '../../support/event-writer';
import { config, logger } from '../../support/stack';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { createTestTopics } from '../../support/topics';
import { waitFor } from '../../support/wait-for';

const topologyPath = join(__dirname, '../../../topics/production.json');
const expired = transitionOf(defaultCatalogue, 'coupon', 'expired');
let own: TestDatabase;
let kafka: Kafka;
let admin: Admin;
let env: Record<string, string>;
const topics: string[] = [];
const runs: CliRun[] = [];
const groups: string[] = [];

beforeAll(async () => {
  own = await createTestDatabase('explain_int');
  kafka = createKafka(config.kafka, logger, '-test-explain-interrupt');
  admin = kafka.admin();
  await admin.connect();
  env = { TB_DB_NAME: own.name, TB_ENTITIES: defaultEntitiesPath, TB_TOPOLOGY: topologyPath, TB_LOG_LEVEL: 'debug' };
});

afterAll(async () => {
  killRunning(runs);
  // A group the old code left behind would otherwise stay on the shared stack.
  if (groups.length > 0) await admin?.deleteGroups(groups).catch(() => undefined);
  if (topics.length > 0) await admin?.deleteTopics({ topics }).catch(() => undefined);
  await admin?.disconnect();
  await own?.drop();
});

/** A coupon moved by the expirer's transaction, its event on a topic of the test's own: explain looks for it there. */
async function movedCoupon(): Promise<string> {
  const batches = createTransitionBatches(own.db, defaultCatalogue, { outbox: await eventWriter(own.db, defaultCatalogue) });
  const [inserted] = await own.db('coupons').insert({ user_id: 9, face_value: 5, status: 'ACTIVE', expire_time: own.db.raw('NOW(3) - INTERVAL 2 SECOND') });
  const id = String(inserted);
  const due = ((await own.db('coupons').where({ id }).first()) as { expire_time: Date }).expire_time.getTime();
  expect((await batches.run(expired, [{ id, expireAtMs: due }], 'stream')).transitioned).toHaveLength(1);
  const row = (await own.db('event_outbox').where('event_key', 'like', `coupon-expired-${id}-%`).first()) as { event_key: string; topic: string };
  topics.push(row.topic);
  await createTestTopics(admin, [{ topic: row.topic, numPartitions: 2 }]);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: row.topic, acks: -1, messages: [{ key: row.event_key, value: 'event', headers: { event_key: row.event_key } }] });
  await producer.disconnect();
  return id;
}

/** The group the run's look sets offsets of, once its log line says it is doing so. */
async function settingOffsetsOf(run: CliRun): Promise<string> {
  return waitFor(
    'the look to log that it sets its group offsets',
    () => {
      for (const line of run.stderr().split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; group?: string };
        if (entry.msg?.endsWith('setting the offsets of its consumer group') === true && entry.group !== undefined) return entry.group;
      }
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 20 },
  );
}

/** SIGINT to the run, returning once the kernel has handed it over (no longer pending in /proc/<pid>/status) or the run has exited. */
async function interrupt(run: CliRun): Promise<void> {
  const pid = run.child.pid!;
  run.child.kill('SIGINT');
  const sigint = 1n << 1n; // signal 2's bit in the pending masks
  const pending = (status: string, mask: string) => BigInt(`0x${new RegExp(`^${mask}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? '0'}`);
  await waitFor(
    'SIGINT delivered',
    () => {
      if (!isRunning(run)) return true;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      return ['SigPnd', 'ShdPnd'].every((mask) => (pending(status, mask) & sigint) === 0n) ? true : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 5 },
  );
}

/** Whether the broker still knows the group (an empty group with committed offsets counts). */
async function groupExists(groupId: string): Promise<boolean> {
  const { groups: listed } = await admin.listGroups();
  return listed.some((g) => g.groupId === groupId);
}

test.each([
  ['one SIGINT', 1],
  ['a second SIGINT once the first is delivered', 2],
])('%s while the look sets its group offsets: it stops, exits 130, and the group is gone', async (_name, signals) => {
  const id = await movedCoupon();
  const run = spawnCli(['explain', 'coupon', id], env);
  runs.push(run);
  const group = await settingOffsetsOf(run);
  groups.push(group);
  await interrupt(run);
  if (signals === 2) await interrupt(run);
  const exited = await run.exited;
  // One signal: the look stopped cleanly and says so. Two: the second exits once the group is
  // deleted (or at once, had the deletion already been done).
  const said =
    signals === 1
      ? 'the record search interrupted by SIGINT: its consumer group was deleted'
      : new RegExp(`SIGINT again: exiting once consumer group ${group.replace(/\./g, '\\.')} is deleted|the record search interrupted by SIGINT`);
  const interrupted = typeof said === 'string' ? run.stderr().includes(said) : said.test(run.stderr());
  expect({ exited, stdout: run.stdout(), interrupted, groupLeft: await groupExists(group) }).toEqual({
    exited: { code: 130, signal: null },
    stdout: '',
    interrupted: true,
    groupLeft: false,
  });
});
