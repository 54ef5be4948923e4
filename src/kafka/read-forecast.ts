/**
 * The forecast's offsets (core/forecast.ts), read with one admin client: every ring topic's and
 * the due lane's end offsets, and the committed offsets of the group that reads each (the
 * expirer the finest tier and the due lane, the cascader the coarser tiers). Read-only: no
 * consumer joins a group, no record is fetched.
 *
 * An admin client's first read of a topic goes one topic at a time. kafkajs adds each topic it
 * is first asked about to the client's metadata and refreshes it; refreshes started together
 * can land out of order, and a late one carrying fewer topics replaces a fuller one, so a
 * concurrent first read finds a topic with no partitions (kafkajs's own `high.pop()` TypeError,
 * seen on the first forecast tick of a three-node cluster). Once every topic is known to the
 * client, the reads run together.
 */
import type { Admin } from 'kafkajs';
import { forecastOf, forecastTopics, unconsumed, type Forecast, type PartitionOffsets } from '../core/forecast';
import { parseTopic, type Topology } from '../core/topology';
import { groupIdOf, holdRoleOfTier, type HoldRole } from '../roles';

/** The group that consumes `topic`: the due lane is the expirer's. */
function readerOf(topology: Topology, topic: string): HoldRole {
  const parsed = parseTopic(topology, topic);
  return parsed === undefined || parsed.lane === 'due' ? 'expirer' : holdRoleOfTier(parsed.tierIndex);
}

/** The topics each admin client has already read: its metadata holds them. */
const knownTo = new WeakMap<object, Set<string>>();

type OffsetsAdmin = Pick<Admin, 'fetchTopicOffsets' | 'fetchOffsets'>;

async function inTurn<T, R>(items: readonly T[], together: boolean, read: (item: T) => Promise<R>): Promise<R[]> {
  if (together) return Promise.all(items.map(read));
  const out: R[] = [];
  for (const item of items) out.push(await read(item));
  return out;
}

/**
 * `admins`: one client (the metrics loop's, long-lived), or several for a one-off read (the
 * command): the topics are dealt out among them, each reading its own share one at a time the
 * first time, the clients side by side, so a cold read of a production topology's hundreds of
 * topics costs its share of metadata refreshes rather than all of them in a row.
 */
export async function readForecast(
  admins: OffsetsAdmin | readonly OffsetsAdmin[],
  topology: Topology,
  groupPrefix: string,
  nowMs: () => number,
): Promise<Forecast> {
  const clients = Array.isArray(admins) ? (admins as readonly OffsetsAdmin[]) : [admins as OffsetsAdmin];
  const topics = forecastTopics(topology);

  // Each client reads its share's ends, then the committed offsets of the groups that read them:
  // kafkajs's fetchOffsets looks each topic up in the client's metadata too, so a topic goes to
  // the client that already knows it.
  const shares = await Promise.all(
    clients.map(async (admin, k) => {
      const own = topics.filter((_, i) => i % clients.length === k);
      const known = knownTo.get(admin) ?? new Set<string>();
      knownTo.set(admin, known);
      const ends = await inTurn(
        own,
        own.every((t) => known.has(t)),
        async (topic) => [topic, await admin.fetchTopicOffsets(topic)] as const,
      );
      for (const topic of own) known.add(topic);
      const byRole = new Map<HoldRole, string[]>();
      for (const topic of own) byRole.set(readerOf(topology, topic), [...(byRole.get(readerOf(topology, topic)) ?? []), topic]);
      const committed = await Promise.all([...byRole].map(([role, mine]) => admin.fetchOffsets({ groupId: groupIdOf(groupPrefix, role), topics: mine })));
      return { ends, committed: committed.flat() };
    }),
  );
  const ends = shares.flatMap((s) => s.ends);
  const committed = shares.flatMap((s) => s.committed);
  const committedOf = new Map<string, number>();
  for (const topic of committed) {
    for (const p of topic.partitions) if (Number(p.offset) >= 0) committedOf.set(`${topic.topic}/${p.partition}`, Number(p.offset));
  }
  const pending = new Map(
    ends.map(([topic, partitions]) => {
      const offsets: PartitionOffsets[] = partitions.map((p) => ({
        partition: p.partition,
        low: Number(p.low),
        high: Number(p.high),
        committed: committedOf.get(`${topic}/${p.partition}`) ?? null,
      }));
      return [topic, unconsumed(offsets)];
    }),
  );
  // The clock after the reads: a bucket released while they ran counts as released.
  return forecastOf(topology, nowMs(), (topic) => pending.get(topic) ?? 0);
}
