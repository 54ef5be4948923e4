/**
 * Replaying a ring bucket against the real stack (Debezium → repartitioner → second-wide rings →
 * expirer → outbox → Debezium's outbox router), both ways an operator can:
 *   - `timebucket replay`: a one-off reader runs the bucket's entries through the expiry
 *     transactions with path = replay, beside the live expirer;
 *   - `timebucket offsets reset`: the stopped expirer group is moved back to the bucket's first
 *     record, and the restarted expirer re-reads it.
 * "Put back as a restored backup would": rows returned to ACTIVE / UNPAID and their outbox rows
 * deleted, without a binlog event (sql_log_bin = 0: a restore the CDC stream never sees), so
 * nothing but a replay brings them back.
 *
 * A database, connectors, topics and groups of the file's own: every bucket holds our rows
 * alone, so each summary is asserted exactly. Each test makes its own bucket; none depends on
 * another having run. The throwaway groups of every scan are gone when a command ends.
 *
 * @mysql
 * @lane isolated
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import type { Admin, Kafka } from 'kafkajs';
import type { Db } from '../../../src/db/knex';
import { createKafka } from '../../../src/kafka/client';
import { bucketStartOf, partitionOfShard } from '../../../src/core/topology';
import { shardOf } from '../../../src/core/router';
import type { Running } from '../../../src/main';
import { replayCommand, type ReplayCliOptions } from '../../../src/cli/replay-run';
import { resetOffsetsToBucket } from '../../../src/replay/bucket-offsets-reset';
import { bucketWindow } from '../../../src/replay/bucket-window';
import { systemClock } from '../../../src/core/clock';
import type { ReplayCounts } from '../../../src/replay/replay-bucket';
import { logger } from '../../support/stack';
import { outboxCount, outboxEvents } from '../../support/outbox-rows';
import type { TestPipeline } from '../../support/pipeline';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import { defaultEntitiesPath } from '../../support/catalogue';
import { readFileSync } from 'node:fs';
import { collectEvents, SeenEvent } from '../../support/events';
import { dbRoot } from '../../support/stack-control';
import { spawnCli } from '../../support/cli';
import { waitFor, withTimeout } from '../../support/wait-for';
import { countInStatus } from '../../support/counts';
import { recordsWithHeader } from '../../support/topics';

let own: OwnDatabasePipeline;
let db: Db;
let kafka: Kafka;
let admin: Admin;
let pipeline: TestPipeline;
let expirer: Running;
let events: { events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> };
const marker = 5_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

type Ours = { coupons: number[]; orders: number[] };
type RowState = { id: number; status: string; expire_time: Date; version: number };

beforeAll(async () => {
  own = await ownDatabasePipeline('replay', JSON.parse(readFileSync(defaultEntitiesPath, 'utf8')));
  ({ pipeline } = own);
  db = own.database.db;
  kafka = createKafka(pipeline.config.kafka, logger, '-test-replay');
  admin = kafka.admin();
  await admin.connect();
  events = await collectEvents(
    pipeline.config,
    pipeline.topology.events.map((e) => e.topic),
  );
  await pipeline.start(['repartitioner', 'cascader', 'outbox-keeper']);
  // On its own, so the offsets-reset test can stop and restart it.
  expirer = await pipeline.start(['expirer']);
});

afterAll(async () => {
  await events?.stop();
  await admin?.disconnect();
  await own?.stop();
});

// ---- helpers ---------------------------------------------------------------------------------

const width = () => pipeline.topology.tiers[0]!.widthMs;

/**
 * A finest-tier bucket ~7 s ahead: inside the finest ring's 9 s horizon, so the entries are
 * written to it (not the due lane) as long as CDC takes less than ~7 s.
 */
function bucketAhead(ms = 7_000): number {
  return bucketStartOf(pipeline.topology.tiers[0]!, Date.now() + ms);
}

async function insertIn(bucketStartMs: number, coupons: number, orders: number, spanMs = width()): Promise<Ours> {
  const at = (i: number, n: number) => new Date(bucketStartMs + 100 + Math.floor(((spanMs - 200) * i) / n));
  const ours: Ours = { coupons: [], orders: [] };
  for (let i = 0; i < coupons; i += 1) ours.coupons.push((await db('coupons').insert({ user_id: marker, status: 'ACTIVE', expire_time: at(i, coupons) }))[0]!);
  for (let i = 0; i < orders; i += 1) ours.orders.push((await db('orders').insert({ user_id: marker, status: 'UNPAID', expire_time: at(i, orders) }))[0]!);
  return ours;
}

const count = (table: 'coupons' | 'orders', ids: number[], status: string) => countInStatus(db, table, status, ids);

async function waitTransitioned(ours: Ours, what: string): Promise<void> {
  await waitFor(
    what,
    async () =>
      (await count('coupons', ours.coupons, 'EXPIRED')) === ours.coupons.length && (await count('orders', ours.orders, 'CANCELLED')) === ours.orders.length
        ? true
        : undefined,
    { timeoutMs: 90_000, intervalMs: 250 },
  );
}

async function rowsOf(ours: Ours): Promise<{ coupons: RowState[]; orders: RowState[] }> {
  const cols = ['id', 'status', 'expire_time', 'version'];
  return {
    coupons: (await db('coupons').whereIn('id', ours.coupons).orderBy('id').select(cols)) as RowState[],
    orders: (await db('orders').whereIn('id', ours.orders).orderBy('id').select(cols)) as RowState[],
  };
}

/**
 * Each of our rows' transition at its due time: `<entity>-<transition>-<id>-<expire_time ms>`,
 * the event_key of every transition of that row at that due time less its last part (the
 * transaction's database time: a row moved again after a restore is another transition, under
 * another key).
 */
async function rowsKeyed(ours: Ours): Promise<string[]> {
  const rows = await rowsOf(ours);
  return [
    ...rows.coupons.map((r) => `coupon-expired-${r.id}-${r.expire_time.getTime()}`),
    ...rows.orders.map((r) => `order-cancelled-${r.id}-${r.expire_time.getTime()}`),
  ];
}

/** The row part of an event_key (rowsKeyed). */
const rowOfKey = (key: string) => key.slice(0, key.lastIndexOf('-'));

/** Outbox rows per row (rowsKeyed), with the path of each. */
async function outboxPaths(ours: Ours, rows: string[]): Promise<Map<string, string[]>> {
  const wanted = new Set(rows);
  const byRow = new Map<string, string[]>();
  for (const e of await outboxEvents(db, pipeline.catalogue, { ids: [...ours.coupons, ...ours.orders] })) {
    const row = rowOfKey(e.eventKey);
    if (wanted.has(row)) byRow.set(row, [...(byRow.get(row) ?? []), String(e.payload['path'])]);
  }
  return byRow;
}

/** Events on the wire with `path`, per row (rowsKeyed): their distinct keys. */
function eventsWithPath(rows: string[], path: string): Map<string, string[]> {
  const wanted = new Set(rows);
  const byRow = new Map<string, string[]>();
  for (const e of events.events) {
    const key = e.headers['event_key']!;
    if (wanted.has(rowOfKey(key)) && e.value['path'] === path) byRow.set(rowOfKey(key), [...(byRow.get(rowOfKey(key)) ?? []), key]);
  }
  return byRow;
}

/** As a restore of a backup taken before the transition: state and outbox back, no binlog event. */
function putBack(ours: Ours): void {
  const name = own.database.name;
  dbRoot(
    [
      'SET SESSION sql_log_bin = 0',
      `UPDATE \`${name}\`.coupons SET status = 'ACTIVE', expired_at = NULL, version = 0 WHERE id IN (${ours.coupons.join(',')})`,
      `UPDATE \`${name}\`.orders SET status = 'UNPAID', cancel_time = NULL, cancel_reason = NULL, version = 0 WHERE id IN (${ours.orders.join(',')})`,
      `DELETE FROM \`${name}\`.event_outbox WHERE event_type = 'COUPON_EXPIRED' AND entity_id IN (${ours.coupons.map((id) => `'${id}'`).join(',')})`,
      `DELETE FROM \`${name}\`.event_outbox WHERE event_type = 'ORDER_CANCELLED' AND entity_id IN (${ours.orders.map((id) => `'${id}'`).join(',')})`,
    ].join('; '),
  );
}

/** The bucket holds our rows alone (a database of the file's own): every figure is exact. */
function expectFigures(actual: Partial<ReplayCounts>, ours: Partial<ReplayCounts>): void {
  expect(actual).toMatchObject(ours);
}

/** No scan group of a replay or an offsets reset is left behind (bucket-scan.ts deletes it). */
async function expectNoReplayGroups(): Promise<void> {
  const { groups } = await admin.listGroups();
  expect(groups.map((g) => g.groupId).filter((g) => g.startsWith(`${pipeline.config.groupPrefix}.replay.`))).toEqual([]);
}

/** A finest-tier bucket ahead whose rows the stream has transitioned; the --at for it, written in another zone. */
async function processedBucket(coupons: number, orders: number): Promise<{ bucket: number; ours: Ours; rows: string[]; total: number; at: string }> {
  const bucket = bucketAhead();
  const ours = await insertIn(bucket, coupons, orders);
  await waitTransitioned(ours, 'the stream to transition every row of the bucket');
  const at = DateTime.fromMillis(bucket + 500, { zone: 'UTC+2' }).toISO()!;
  return { bucket, ours, rows: await rowsKeyed(ours), total: coupons + orders, at };
}

async function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = spawnCli(args, { ...pipeline.env, TB_LOG_LEVEL: 'warn' });
  const { code } = await withTimeout(`timebucket ${args.join(' ')}`, run.exited, 90_000);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

async function cliJson<T>(args: string[]): Promise<T> {
  const r = await cli([...args, '--json']);
  if (r.code !== 0) throw new Error(`timebucket ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function inProcess(opts: Partial<ReplayCliOptions> & { atMs: number }) {
  const lines: string[] = [];
  const progress = { start: () => undefined, update: () => undefined, stop: () => undefined };
  const summary = await replayCommand(
    pipeline.config,
    pipeline.topology,
    pipeline.catalogue,
    logger,
    { dryRun: false, json: false, ...opts },
    { print: (l) => lines.push(l), progress },
  );
  return { summary, lines };
}

type ReplayJson = ReplayCounts & {
  bucket: { start: string; end: string; topic: string; tier: string };
  partitions: Array<{ partition: number }>;
  dryRun: boolean;
};

async function expirerOffsets(topic: string): Promise<Map<number, string>> {
  const [entry] = await admin.fetchOffsets({ groupId: `${pipeline.config.groupPrefix}.expirer`, topics: [topic] });
  return new Map((entry?.partitions ?? []).map((p) => [p.partition, p.offset]));
}

// ---- a processed bucket, put back, replayed both ways ------------------------------------------

test('a processed bucket: replay (real CLI) finds it done; put back as from a backup, a dry run reports it due and --entity/--shard narrow it; replay transitions each row once more, path replay', async () => {
  const { bucket, ours, rows: keyed, total, at } = await processedBucket(20, 6);
  const outboxBefore = await outboxPaths(ours, keyed);
  expect([...outboxBefore.values()].every((paths) => paths.length === 1 && paths[0] === 'stream')).toBe(true);
  const rowsBefore = await rowsOf(ours);

  const summary = await cliJson<ReplayJson>(['replay', '--at', at]);
  expect(at).toMatch(/\+02:00$/);
  expect(summary.bucket.start).toBe(DateTime.fromMillis(bucket, { zone: 'utc' }).toISO());
  expect(summary.bucket.end).toBe(DateTime.fromMillis(bucket + width(), { zone: 'utc' }).toISO());
  expect(summary.bucket.tier).toBe('minute');
  expect(summary.partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
  expectFigures(summary, { entries: total, transitioned: 0, alreadyDone: total, notDue: 0, stale: 0, invalid: 0 });
  expect(await outboxPaths(ours, keyed)).toEqual(outboxBefore);
  expect(await rowsOf(ours)).toEqual(rowsBefore);

  putBack(ours);
  const putBackRows = await rowsOf(ours);
  expect(putBackRows.coupons.every((r) => r.status === 'ACTIVE')).toBe(true);
  const dry = await cliJson<ReplayJson>(['replay', '--at', at, '--dry-run']);
  expect(dry.dryRun).toBe(true);
  expectFigures(dry, { entries: total, due: total, alreadyDone: 0, notDue: 0, stale: 0, invalid: 0 });
  expect(dry).not.toHaveProperty('transitioned');

  // --entity and --shard narrow it: one partition read, that shard's coupons only.
  const shard = shardOf(String(ours.coupons[0]!), pipeline.topology.shards);
  const narrowed = await inProcess({ atMs: bucket, entity: 'coupon', shard, dryRun: true });
  expect(narrowed.summary.partitions.map((p) => p.partition)).toEqual([partitionOfShard(shard, pipeline.topology.tiers[0]!.partitions)]);
  const inShard = ours.coupons.filter((id) => shardOf(String(id), pipeline.topology.shards) === shard).length;
  expectFigures(narrowed.summary.counts, { entries: inShard, due: inShard, transitioned: 0 });
  expect(narrowed.lines[0]).toBe('dry run: nothing was changed');
  expect(await rowsOf(ours)).toEqual(putBackRows);
  expect((await outboxPaths(ours, keyed)).size).toBe(0);

  const { summary: replayed, lines } = await inProcess({ atMs: bucket + 999 });
  expectFigures(replayed.counts, { entries: total, transitioned: total, alreadyDone: 0, notDue: 0, stale: 0, invalid: 0 });
  expect(lines).toContain(`transitioned: ${total}`);
  expect(await count('coupons', ours.coupons, 'EXPIRED')).toBe(ours.coupons.length);
  expect(await count('orders', ours.orders, 'CANCELLED')).toBe(ours.orders.length);
  const outbox = await outboxPaths(ours, keyed);
  expect(outbox.size).toBe(total);
  expect([...outbox.values()].every((paths) => paths.length === 1 && paths[0] === 'replay')).toBe(true);
  await waitFor('the replayed events on the event topics', () => (eventsWithPath(keyed, 'replay').size === total ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  expect([...eventsWithPath(keyed, 'replay').values()].every((keys) => keys.length === 1)).toBe(true);
  // The row moved a second time: an event of its own, under a key the stream's did not use.
  const streamKeys = eventsWithPath(keyed, 'stream');
  expect([...eventsWithPath(keyed, 'replay')].every(([row, [key]]) => new Set(streamKeys.get(row)).size === 1 && !streamKeys.get(row)!.includes(key!))).toBe(
    true,
  );

  // Once more: nothing left to do.
  const again = await inProcess({ atMs: bucket });
  expectFigures(again.summary.counts, { entries: total, transitioned: 0, alreadyDone: total });
  expect((await outboxPaths(ours, keyed)).size).toBe(total);
  await expectNoReplayGroups();
});

test("offsets reset refuses while the expirer runs; stopped, reset to the bucket's first record in exactly its partitions and restarted, the expirer transitions the put-back rows once each", async () => {
  const { bucket, ours, rows: keyed, total, at } = await processedBucket(20, 6);
  putBack(ours);
  const minute = pipeline.topology.tiers[0]!;
  const topic = `${pipeline.topology.prefix}.minute.${String((bucket / width()) % minute.ring).padStart(2, '0')}`;
  // The bucket's records are the last of their partitions (this file's own topics, nothing due
  // after them on this topic yet). Its first record in each partition is read from the topic:
  // a rejoin of the repartitioner's group re-reads the changes it had not committed and writes
  // their entries again (at least once; the expirer finds them done), so a partition can hold
  // more of the bucket's records than our rows.
  const entriesIn = new Map<number, number>();
  for (const id of [...ours.coupons, ...ours.orders]) {
    const partition = partitionOfShard(shardOf(String(id), pipeline.topology.shards), minute.partitions);
    entriesIn.set(partition, (entriesIn.get(partition) ?? 0) + 1);
  }
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]));
  const committedBefore = await waitFor('the expirer to commit the whole bucket', async () => {
    const committed = await expirerOffsets(topic);
    return [...entriesIn.keys()].every((partition) => committed.get(partition) === ends.get(partition)) ? committed : undefined;
  });
  const inBucket = await recordsWithHeader(kafka, topic, 'bucket_start', String(bucket));
  expect([...inBucket.keys()].sort((a, b) => a - b)).toEqual([...entriesIn.keys()].sort((a, b) => a - b));
  for (const [partition, n] of entriesIn) expect(inBucket.get(partition)!.count).toBeGreaterThanOrEqual(n);
  const expectedTargets = [...inBucket.entries()].sort(([a], [b]) => a - b).map(([partition, { first }]) => ({ partition, target: first }));

  const refused = await cli(['offsets', 'reset', '--at', at]);
  expect(refused.code).toBe(4);
  expect(refused.stderr).toMatch(new RegExp(`refused: group ${pipeline.config.groupPrefix}\\.expirer has 1 member`));
  expect(await expirerOffsets(topic)).toEqual(committedBefore);

  await expirer.stop();
  await waitFor('the expirer group to be empty', async () => {
    const { groups } = await admin.describeGroups([`${pipeline.config.groupPrefix}.expirer`]);
    return groups[0]!.members.length === 0 ? true : undefined;
  });

  const dryRun = await cli(['offsets', 'reset', '--at', at, '--dry-run']);
  expect(dryRun.code).toBe(0);
  expect(dryRun.stdout).toMatch(/dry run: nothing was changed/);
  expect(dryRun.stdout).toMatch(/--reset-offsets --to-offset \d+ --execute/);
  expect(await expirerOffsets(topic)).toEqual(committedBefore);

  // kafkajs's setOffsets commits through a temporary member and skips the partitions that
  // member is not assigned. Forced here (only the first partition is passed on): the reset
  // reads the offsets back, and says it is not applied, naming the partitions left behind.
  const real = createKafka(pipeline.config.kafka, logger, '-test-partial-reset');
  const skipping = Object.assign(Object.create(real) as Kafka, {
    admin: () => {
      const a = real.admin();
      const setOffsets = a.setOffsets.bind(a);
      return Object.assign(a, { setOffsets: (req: Parameters<Admin['setOffsets']>[0]) => setOffsets({ ...req, partitions: req.partitions.slice(0, 1) }) });
    },
  });
  const window = bucketWindow(pipeline.topology, 0, bucket);
  const partial = await resetOffsetsToBucket({
    kafka: skipping,
    topology: pipeline.topology,
    catalogue: pipeline.catalogue,
    groupPrefix: pipeline.config.groupPrefix,
    window,
    dryRun: false,
    clock: systemClock,
    logger,
  });
  const wanted = partial.partitions.filter((p) => p.target !== undefined);
  expect(wanted.map((p) => ({ partition: p.partition, target: p.target }))).toEqual(expectedTargets);
  expect(partial.applied).toBe(false);
  expect(partial.unmoved.map((u) => u.partition)).toEqual(wanted.slice(1).map((p) => p.partition));
  expect(partial.unmoved.map((u) => u.committed)).toEqual(wanted.slice(1).map((p) => committedBefore.get(p.partition)));
  // Put back as it was, so the command's own run below starts from the same offsets.
  await admin.setOffsets({
    groupId: `${pipeline.config.groupPrefix}.expirer`,
    topic,
    partitions: wanted.slice(0, 1).map((p) => ({ partition: p.partition, offset: p.committed })),
  });
  expect(await expirerOffsets(topic)).toEqual(committedBefore);

  const reset = await cliJson<{
    applied: boolean;
    bucket: { topic: string };
    partitions: Array<{ partition: number; committed: string; target: string | null }>;
    stockCommands: string[];
  }>(['offsets', 'reset', '--at', at]);
  expect(reset.applied).toBe(true);
  expect(reset.bucket.topic).toBe(topic);
  const moved = reset.partitions.filter((p) => p.target !== null);
  expect(moved.map((p) => ({ partition: p.partition, target: p.target }))).toEqual(expectedTargets);
  expect(reset.stockCommands).toHaveLength(moved.length);
  const after = await expirerOffsets(topic);
  for (const p of reset.partitions) expect(after.get(p.partition)).toBe(p.target ?? committedBefore.get(p.partition));
  await expectNoReplayGroups();

  // The printed stock command works as printed (the stack's own copy of the tool): it sets
  // the offset the reset already set.
  const stock = reset.stockCommands[0]!.split(' ');
  execFileSync(join(__dirname, '../../../stack/bin/kafka-consumer-groups.sh'), stock.slice(1), { encoding: 'utf8', timeout: 60_000 });
  expect(await expirerOffsets(topic)).toEqual(after);

  expirer = await pipeline.start(['expirer']);
  await waitTransitioned(ours, 'the restarted expirer to transition the put-back rows');
  await waitFor('one outbox row per put-back row', async () => ((await outboxPaths(ours, keyed)).size === total ? true : undefined), { timeoutMs: 30_000 });
  const outbox = await outboxPaths(ours, keyed);
  expect([...outbox.values()].every((paths) => paths.length === 1 && paths[0] === 'stream')).toBe(true);
  // Published once more each: the first run's event and this one, both by the stream, each
  // transition under a key of its own.
  await waitFor(
    'the re-read transitions published',
    () => ([...eventsWithPath(keyed, 'stream').values()].filter((keys) => keys.length >= 2).length === total ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 200,
    },
  );
  expect([...eventsWithPath(keyed, 'stream').values()].every((keys) => keys.length === 2 && new Set(keys).size === 2)).toBe(true);
  const rows = await rowsOf(ours);
  expect([...rows.coupons, ...rows.orders].every((r) => r.version === 1)).toBe(true);
});

// ---- a bucket whose rows were paid, used or extended before they were due ----------------------

test('replay of a bucket with rows paid, used or extended since touches none of them; the dry run reports them stale', async () => {
  const bucket = bucketAhead();
  const ours = await insertIn(bucket, 10, 6);
  // Before they are due (the inserts' entries are already on their way to the bucket).
  const paid = ours.orders.slice(0, 3);
  const extended = ours.coupons.slice(0, 3);
  const used = ours.coupons.slice(3, 5);
  await db('orders').whereIn('id', paid).update({ status: 'PAID' });
  await db('coupons')
    .whereIn('id', extended)
    .update({ expire_time: db.raw('expire_time + INTERVAL 1 HOUR') });
  await db('coupons').whereIn('id', used).update({ status: 'USED' });
  const stale = paid.length + extended.length + used.length;
  const expiring = { coupons: ours.coupons.slice(5), orders: ours.orders.slice(3) };
  await waitTransitioned(expiring, 'the stream to transition the rows left expirable');
  const done = expiring.coupons.length + expiring.orders.length;
  const at = DateTime.fromMillis(bucket, { zone: 'America/New_York' }).toISO()!;

  const rowsBefore = await rowsOf(ours);
  const eventsOf = async () =>
    (await outboxCount(db, pipeline.catalogue, { entity: 'coupon', ids: ours.coupons })).rows +
    (await outboxCount(db, pipeline.catalogue, { entity: 'order', ids: ours.orders })).rows;
  const outboxBefore = await eventsOf();

  const dry = await cliJson<ReplayJson>(['replay', '--at', at, '--dry-run']);
  expectFigures(dry, { entries: stale + done, due: 0, alreadyDone: done, notDue: 0, stale });
  expect(await rowsOf(ours)).toEqual(rowsBefore);

  const real = await cliJson<ReplayJson>(['replay', '--at', at]);
  expect(real.transitioned).toBe(0);
  expectFigures(real, { entries: stale + done, alreadyDone: done, notDue: 0, stale });
  expect(await rowsOf(ours)).toEqual(rowsBefore);
  const outboxAfter = await eventsOf();
  expect(outboxAfter).toBe(outboxBefore);
  expect(outboxAfter).toBe(done);
  await expectNoReplayGroups();
});

// ---- a bucket not yet due -----------------------------------------------------------------------

test('replay of a coarse-tier bucket not yet due (--tier day) finds its entries and transitions none', async () => {
  const day = pipeline.topology.tiers[2]!;
  // Three day buckets ahead (48 s, within the day tier's 64 s horizon and beyond the hour
  // tier's 24 s), due 12–14 s into it: at least ~44 s after the insert. That is also where the
  // day ring parks entries beyond every horizon (core/router.ts), and they move with it, so any
  // day bucket ahead may hold another test's: the stale test's coupons extended by an hour, and
  // their 30-minute reminders. Orders are never parked in this file (none is extended, and
  // orders have no reminders), so the replay reads orders only (--entity order) and every
  // figure is still exact.
  const bucket = bucketStartOf(day, Date.now()) + 3 * day.widthMs;
  const ours = await insertIn(bucket + 12_000, 0, 5, 2_000);

  const found = await waitFor(
    "the entries in the day ring's bucket",
    async () => {
      const { summary } = await inProcess({ atMs: bucket, tier: 'day', entity: 'order', dryRun: true });
      return summary.counts.entries >= ours.orders.length ? summary : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  expect(found.window.tier.name).toBe('day');
  expect(found.phase).toBe('future');

  const { summary } = await inProcess({ atMs: bucket + 1, tier: '2', entity: 'order' });
  expect(summary.counts.transitioned).toBe(0);
  expectFigures(summary.counts, { entries: ours.orders.length, notDue: ours.orders.length, alreadyDone: 0, stale: 0, reminders: 0 });
  expect(await count('orders', ours.orders, 'UNPAID')).toBe(ours.orders.length);
  expect((await outboxPaths(ours, await rowsKeyed(ours))).size).toBe(0);
  await expectNoReplayGroups();
});
