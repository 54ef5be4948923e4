/**
 * The forecast's offsets (core/forecast.ts), read with one admin client: every ring topic's and
 * the due lane's end offsets, and the committed offsets of the group that reads each (the
 * expirer the finest tier and the due lane, the cascader the coarser tiers). Read-only: no
 * consumer joins a group, no record is fetched.
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

export async function readForecast(admin: Pick<Admin, 'fetchTopicOffsets' | 'fetchOffsets'>, topology: Topology, groupPrefix: string, nowMs: () => number): Promise<Forecast> {
  const topics = forecastTopics(topology);
  const byRole = new Map<HoldRole, string[]>();
  for (const topic of topics) {
    const role = readerOf(topology, topic);
    byRole.set(role, [...(byRole.get(role) ?? []), topic]);
  }

  const [ends, committed] = await Promise.all([
    Promise.all(topics.map(async (topic) => [topic, await admin.fetchTopicOffsets(topic)] as const)),
    Promise.all([...byRole].map(([role, own]) => admin.fetchOffsets({ groupId: groupIdOf(groupPrefix, role), topics: own }))),
  ]);
  const committedOf = new Map<string, number>();
  for (const topic of committed.flat()) {
    for (const p of topic.partitions) if (Number(p.offset) >= 0) committedOf.set(`${topic.topic}/${p.partition}`, Number(p.offset));
  }
  const pending = new Map(
    ends.map(([topic, partitions]) => {
      const offsets: PartitionOffsets[] = partitions.map((p) => ({ partition: p.partition, low: Number(p.low), high: Number(p.high), committed: committedOf.get(`${topic}/${p.partition}`) ?? null }));
      return [topic, unconsumed(offsets)];
    }),
  );
  // The clock after the reads: a bucket released while they ran counts as released.
  return forecastOf(topology, nowMs(), (topic) => pending.get(topic) ?? 0);
}
