/**
 * `timebucket topics apply`: creates every declared topic that is missing and reports drift
 * (partition counts or configs that differ from the declaration) without changing existing
 * topics: shrinking partitions is impossible and growing them would move shards between
 * partitions, so drift is for an operator to decide. Idempotent.
 */
import { Admin, ConfigResourceTypes } from 'kafkajs';
import type { TopicDeclaration } from '../core/topology';

export type TopicDrift = Readonly<{ topic: string; what: string; declared: string; actual: string }>;
export type ApplyReport = Readonly<{ created: string[]; existing: string[]; drift: TopicDrift[] }>;

export async function applyTopics(admin: Admin, declared: readonly TopicDeclaration[]): Promise<ApplyReport> {
  const present = new Set(await admin.listTopics());
  const missing = declared.filter((d) => !present.has(d.topic));
  const existing = declared.filter((d) => present.has(d.topic));
  // Chunked: one request creating hundreds of topics can outlast the request timeout.
  for (let i = 0; i < missing.length; i += 50) {
    await admin.createTopics({
      waitForLeaders: true,
      timeout: 60_000,
      topics: missing.slice(i, i + 50).map((d) => ({
        topic: d.topic,
        numPartitions: d.partitions,
        replicationFactor: -1,
        configEntries: Object.entries(d.config).map(([name, value]) => ({ name, value })),
      })),
    });
  }
  return { created: missing.map((d) => d.topic), existing: existing.map((d) => d.topic), drift: await findDrift(admin, existing) };
}

async function findDrift(admin: Admin, existing: readonly TopicDeclaration[]): Promise<TopicDrift[]> {
  if (existing.length === 0) return [];
  const drift: TopicDrift[] = [];
  const meta = await admin.fetchTopicMetadata({ topics: existing.map((d) => d.topic) });
  const partitions = new Map(meta.topics.map((t) => [t.name, t.partitions.length]));
  const configs = await admin.describeConfigs({
    includeSynonyms: false,
    resources: existing.map((d) => ({ type: ConfigResourceTypes.TOPIC, name: d.topic, configNames: Object.keys(d.config) })),
  });
  const actualConfig = new Map(configs.resources.map((r) => [r.resourceName, new Map(r.configEntries.map((e) => [e.configName, e.configValue]))]));
  for (const d of existing) {
    const actual = partitions.get(d.topic);
    if (actual !== d.partitions) drift.push({ topic: d.topic, what: 'partitions', declared: String(d.partitions), actual: String(actual) });
    for (const [name, value] of Object.entries(d.config)) {
      const got = actualConfig.get(d.topic)?.get(name);
      if (got !== value) drift.push({ topic: d.topic, what: name, declared: value, actual: String(got) });
    }
  }
  return drift;
}
