/**
 * Fixes where a new consumer group starts BEFORE it first joins, by committing its offsets.
 * kafkajs resolves `fromBeginning: false` only when the member first fetches, so every record
 * written between a deployment's start and that moment (seconds, on a slow start) would be
 * skipped: for the repartitioner, rows never scheduled (the scanner would catch them a grace
 * period late). So the positions are taken first (`startPositions`: each topic's end, or its
 * beginning for a topic that does not exist yet, since all of it will be new), and committed
 * before the group joins (`pinGroup`). Done by `topics apply` (before the first `run`) and again
 * by the repartitioner, which takes the positions before its start-up returns.
 *
 * A group that has committed offsets is left alone, always. kafkajs's setOffsets refuses a group
 * with running members: another replica joined first with its own start, reported as 'busy'.
 */
import type { Admin } from 'kafkajs';

/** Per topic: the offsets to start at, or null for "the topic's beginning" (it did not exist). */
export type StartPositions = ReadonlyMap<string, ReadonlyArray<{ partition: number; offset: string }> | null>;

export type PinOutcome = 'pinned' | 'has-offsets' | 'busy';

/** Undefined when the group has committed offsets (it resumes from them). */
export async function startPositions(admin: Admin, groupId: string, topics: readonly string[]): Promise<StartPositions | undefined> {
  const committed = await admin.fetchOffsets({ groupId, topics: [...topics] }).catch(() => [] as Array<{ partitions: Array<{ offset: string }> }>);
  if (committed.some((t) => t.partitions.some((p) => Number(p.offset) >= 0))) return undefined;
  const existing = new Set(await admin.listTopics());
  const positions = new Map<string, Array<{ partition: number; offset: string }> | null>();
  for (const topic of topics) {
    positions.set(topic, existing.has(topic) ? (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.high })) : null);
  }
  return positions;
}

export async function pinGroup(admin: Admin, groupId: string, positions: StartPositions): Promise<Exclude<PinOutcome, 'has-offsets'>> {
  try {
    for (const [topic, at] of positions) {
      const partitions = at ?? (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.low }));
      // (kafkajs commits through a paused member of the group: about 5 s per topic, once per group.)
      await admin.setOffsets({ groupId, topic, partitions: [...partitions] });
    }
    return 'pinned';
  } catch (err) {
    if (err instanceof Error && /no running instances/.test(err.message)) return 'busy';
    throw err;
  }
}

/** Both steps at once, where nothing is written in between (`topics apply`). */
export async function pinNewGroupToEnd(admin: Admin, groupId: string, topics: readonly string[]): Promise<PinOutcome> {
  const positions = await startPositions(admin, groupId, topics);
  return positions === undefined ? 'has-offsets' : pinGroup(admin, groupId, positions);
}
