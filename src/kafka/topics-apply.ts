/**
 * `timebucket topics apply`: creates every declared topic that is missing and reports drift
 * (partition counts or configs that differ from the declaration). Existing topics are changed
 * only when asked: `growPartitions` names the topics that may be given the partitions they
 * declare beyond what they have: the bucket lanes, where entries in flight are held where they
 * are (core/held-record.ts); never a CDC or event topic, whose keys' partitions (a row's order,
 * an entity's order for subscribers) would move. Shrinking is impossible. `prefix` also reports the orphans: topics of that prefix's lanes
 * that the declaration no longer has (a ring shrunk, a tier renamed or removed), which no role
 * reads any more. Idempotent.
 */
import { Admin, ConfigResourceTypes } from 'kafkajs';
import { KafkaUnavailableError } from '../core/errors';
import type { TopicDeclaration } from '../core/topology';

export type TopicDrift = Readonly<{ topic: string; what: string; declared: string; actual: string }>;
export type ApplyReport = Readonly<{
  created: string[];
  existing: string[];
  /** Differences left as they are (partition growth not asked for, configs). */
  drift: TopicDrift[];
  /** Topics given the partitions they declare (growPartitions). */
  grown: TopicDrift[];
  /** Ring topics of `prefix` that nothing declared reads any more. */
  orphans: string[];
}>;

/** A declared partition count above the topic's: growth, which Kafka can do (a lower one it cannot). */
export function isPartitionGrowth(d: TopicDrift): boolean {
  return d.what === 'partitions' && Number(d.declared) > Number(d.actual);
}

export type ApplyOptions = Readonly<{ growPartitions?: (topic: string) => boolean; prefix?: string }>;

export async function applyTopics(admin: Admin, declared: readonly TopicDeclaration[], opts: ApplyOptions = {}): Promise<ApplyReport> {
  const listed = await admin.listTopics();
  const present = new Set(listed);
  const missing = declared.filter((d) => !present.has(d.topic));
  const existing = declared.filter((d) => present.has(d.topic));
  // Chunked: one request creating hundreds of topics can outlast the request timeout. Leaders
  // are awaited once for all of them afterwards: kafkajs's per-request wait gives up while a
  // single broker is still electing leaders for hundreds of new partitions.
  for (let i = 0; i < missing.length; i += 50) {
    await admin.createTopics({
      waitForLeaders: false,
      timeout: 60_000,
      topics: missing.slice(i, i + 50).map((d) => ({
        topic: d.topic,
        numPartitions: d.partitions,
        replicationFactor: -1,
        configEntries: Object.entries(d.config).map(([name, value]) => ({ name, value })),
      })),
    });
  }
  await waitForLeaders(
    admin,
    missing.map((d) => d.topic),
  );
  const found = await findDrift(admin, existing);
  const grows = opts.growPartitions ?? (() => false);
  const growable = found.filter((d) => isPartitionGrowth(d) && grows(d.topic));
  if (growable.length > 0) {
    await admin.createPartitions({ timeout: 60_000, topicPartitions: growable.map((d) => ({ topic: d.topic, count: Number(d.declared) })) });
    // Until the metadata shows the new partitions, with leaders: the old ones have them already.
    await waitForLeaders(
      admin,
      growable.map((d) => d.topic),
      new Map(growable.map((d) => [d.topic, Number(d.declared)])),
    );
  }
  return {
    created: missing.map((d) => d.topic),
    existing: existing.map((d) => d.topic),
    drift: found.filter((d) => !growable.includes(d)),
    grown: growable,
    orphans: opts.prefix === undefined ? [] : orphanRingTopics(listed, declared, opts.prefix),
  };
}

/** `<prefix>.<tier>.<digits>` topics that are not declared: a ring's or a tier's that went. */
function orphanRingTopics(listed: readonly string[], declared: readonly TopicDeclaration[], prefix: string): string[] {
  const names = new Set(declared.map((d) => d.topic));
  const ring = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.[a-z0-9]+\\.[0-9]+$`);
  return listed.filter((t) => ring.test(t) && !names.has(t)).sort();
}

/** Bounded wait until every partition of `topics` has a leader (and each topic `partitions` of them, when given). */
export async function waitForLeaders(admin: Admin, topics: readonly string[], partitions?: ReadonlyMap<string, number>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let pending = [...topics];
  while (pending.length > 0) {
    try {
      const meta = await admin.fetchTopicMetadata({ topics: pending });
      const complete = (t: (typeof meta.topics)[number]) => t.partitions.length >= (partitions?.get(t.name) ?? 1) && t.partitions.every((p) => p.leader >= 0);
      const ready = new Set(meta.topics.filter(complete).map((t) => t.name));
      pending = pending.filter((t) => !ready.has(t));
    } catch (err) {
      // Topics not yet known to the broker's metadata: ask again.
      if (Date.now() >= deadline) throw err;
    }
    if (pending.length === 0) return;
    if (Date.now() >= deadline)
      throw new KafkaUnavailableError(`no leader after ${timeoutMs} ms for ${pending.length} topic(s), e.g. ${pending[0]}`, { topics: pending.length });
    await new Promise((r) => setTimeout(r, 200));
  }
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
