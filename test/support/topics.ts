/**
 * Topics a test creates itself, ready once every partition has a leader. Not kafkajs's
 * `createTopics({ waitForLeaders: true })`: its wait retries only LEADER_NOT_AVAILABLE, and a
 * broker whose metadata does not know the topic yet (a busy one, with other lanes' tests
 * creating topics too) answers UNKNOWN_TOPIC_OR_PARTITION, which it throws. The wait is the one
 * `topics apply` uses.
 */
import type { Admin, ITopicConfig } from 'kafkajs';
import { waitForLeaders } from '../../src/kafka/topics-apply';

/** Creates `topics` (those that exist are left as they are); resolves whether any was created. */
export async function createTestTopics(admin: Admin, topics: ITopicConfig[]): Promise<boolean> {
  const created = await admin.createTopics({ topics, waitForLeaders: false });
  await waitForLeaders(admin, topics.map((t) => t.topic), new Map(topics.map((t) => [t.topic, t.numPartitions ?? 1])), 60_000);
  return created;
}
