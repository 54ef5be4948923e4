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
import { Admin, ConfigResourceTypes, ITopicMetadata, logLevel } from 'kafkajs';
import type { Clock } from '../core/clock';
import { KafkaUnavailableError } from '../core/errors';
import type { TopicDeclaration } from '../core/topology';
import { retry, withinDeadline } from '../runtime/retry';
import { RetryPolicies } from '../runtime/retry-policy';

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

/** `wait`: the clock and sleep of the waits for new topics' leaders (tests). */
export type ApplyOptions = Readonly<{ growPartitions?: (topic: string) => boolean; prefix?: string; wait?: WaitOptions }>;

export async function applyTopics(admin: Admin, declared: readonly TopicDeclaration[], opts: ApplyOptions = {}): Promise<ApplyReport> {
  const listed = await admin.listTopics();
  const present = new Set(listed);
  const missing = declared.filter((d) => !present.has(d.topic));
  const existing = declared.filter((d) => present.has(d.topic));
  // Chunked: one request creating hundreds of topics can outlast the request timeout. Leaders
  // are awaited once for all of them afterwards (waitForNewTopics): kafkajs's per-request wait
  // gives up while a single broker is still electing leaders for hundreds of new partitions.
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
  await waitForNewTopics(
    admin,
    missing.map((d) => d.topic),
    opts.wait,
  );
  const found = await findDrift(admin, existing);
  const grows = opts.growPartitions ?? (() => false);
  const growable = found.filter((d) => isPartitionGrowth(d) && grows(d.topic));
  if (growable.length > 0) {
    await admin.createPartitions({ timeout: 60_000, topicPartitions: growable.map((d) => ({ topic: d.topic, count: Number(d.declared) })) });
    // Until the metadata shows the new partitions, with leaders: the old ones have them already.
    const grownTo = new Map(growable.map((d) => [d.topic, Number(d.declared)]));
    await waitForNewTopics(admin, [...grownTo.keys()], { ...opts.wait, partitions: grownTo });
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

export type WaitOptions = Readonly<{ clock?: Clock; sleep?: (ms: number) => Promise<void> }>;

/**
 * `retry`'s options for a wait that ends `timeoutMs` from now. An attempt fails while the brokers
 * do not know the topics yet, which is the wait itself (said once at info by `waitForNewTopics`),
 * so its attempts are not logged, as the loop before the runner logged none. The last failure is thrown.
 */
function boundedBy(timeoutMs: number, what: string, opts: WaitOptions) {
  return { policy: RetryPolicies.topicsAppear, what, log: () => undefined, ...withinDeadline(timeoutMs, opts.clock, opts.sleep) };
}

/** The topics of `topics` that `meta` does not show complete: every partition (`partitions` of them, when given) with a leader. */
function incomplete(meta: { topics: ITopicMetadata[] }, topics: readonly string[], partitions?: ReadonlyMap<string, number>): string[] {
  const complete = (t: ITopicMetadata) => t.partitions.length >= (partitions?.get(t.name) ?? 1) && t.partitions.every((p) => p.leader >= 0);
  const ready = new Set(meta.topics.filter(complete).map((t) => t.name));
  return topics.filter((t) => !ready.has(t));
}

const noLeader = (pending: readonly string[], timeoutMs: number) =>
  new KafkaUnavailableError(`no leader after ${timeoutMs} ms for ${pending.length} topic(s), e.g. ${pending[0]}`, { topics: pending.length });

/**
 * One look at the topics still without a leader for every partition (`partitions` of them, when
 * given), read by `read` for the ones still pending: throws while some are, for `retry` to look
 * again, having told `onPending` which.
 */
function leaderLook(
  topics: readonly string[],
  read: (pending: string[]) => Promise<{ topics: ITopicMetadata[] }>,
  partitions: ReadonlyMap<string, number> | undefined,
  timeoutMs: number,
  onPending?: (pending: readonly string[]) => void,
): () => Promise<void> {
  let pending = [...topics];
  return async () => {
    if (pending.length === 0) return;
    pending = incomplete(await read(pending), pending, partitions);
    if (pending.length === 0) return;
    onPending?.(pending);
    throw noLeader(pending, timeoutMs);
  };
}

/**
 * Bounded wait until every partition of `topics` has a leader (and each topic `partitions` of
 * them, when given), asked for by name, as a consumer's subscription asks for them.
 */
export async function waitForLeaders(
  admin: Admin,
  topics: readonly string[],
  partitions?: ReadonlyMap<string, number>,
  timeoutMs = 120_000,
  opts: WaitOptions = {},
): Promise<void> {
  if (topics.length === 0) return;
  // A topic not yet known to the broker's metadata fails the request: it is asked again.
  const byName = leaderLook(topics, (pending) => admin.fetchTopicMetadata({ topics: pending }), partitions, timeoutMs);
  await retry(byName, boundedBy(timeoutMs, 'waiting for the leaders of the new topics', opts));
}

/**
 * What `applyTopics` waits for before its next step: topics just created (or grown) with a
 * leader for every partition. First in the cluster's whole metadata, as `listTopics` reads it: a
 * broker that has not learnt of a new topic yet leaves it out of that answer, where a request
 * naming the topic is answered with an error (UNKNOWN_TOPIC_OR_PARTITION) that kafkajs logs at
 * error level, a line per attempt (a first `make run` printed thirty of them). The wait is logged
 * once, at info, through the admin client's logger (the process's structured log, kafka/client.ts).
 * Then the check `waitForLeaders` makes, by name, which then finds them at once on a one-broker
 * stack. One deadline for both.
 */
export async function waitForNewTopics(
  admin: Admin,
  topics: readonly string[],
  opts: WaitOptions & Readonly<{ partitions?: ReadonlyMap<string, number>; timeoutMs?: number }> = {},
): Promise<void> {
  const { partitions, timeoutMs = 120_000 } = opts;
  if (topics.length === 0) return;
  const sayOnce = once((pending: readonly string[]) =>
    admin
      .logger()
      .namespace('TopicsApply', logLevel.INFO)
      .info(`waiting until the brokers know a leader for every partition of ${pending.length} topic(s) just created or grown, up to ${timeoutMs} ms`),
  );
  const listed = leaderLook(topics, () => admin.fetchTopicMetadata(), partitions, timeoutMs, sayOnce);
  const byName = leaderLook(topics, (pending) => admin.fetchTopicMetadata({ topics: pending }), partitions, timeoutMs);
  await retry(
    async () => {
      await listed();
      await byName();
    },
    boundedBy(timeoutMs, 'waiting for the leaders of the new topics', opts),
  );
}

function once<A extends unknown[]>(f: (...args: A) => void): (...args: A) => void {
  let done = false;
  return (...args) => {
    if (!done) f(...args);
    done = true;
  };
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
