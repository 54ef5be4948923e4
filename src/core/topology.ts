/**
 * The topology: the tier table and every topic it implies, as data, checked once.
 *
 * Glossary
 *   tier      a ring of bucket topics of one width (minute, hour, day); listed finest first.
 *             Releases of the finest tier expire entries; releases of coarser tiers cascade
 *             (re-route) them, normally into a finer tier.
 *   bucket    the interval [T, T + widthMs), T a multiple of widthMs (epoch ms)
 *   ring      how many topics a tier cycles through: bucket T lives in topic
 *             (T / widthMs) mod ring, so the topic set never changes
 *   horizon   (ring − guard) × widthMs: a tier accepts bucket T only while T − (current bucket)
 *             < horizon, which keeps the `guard` topics behind the current one unwritten
 *   lead      how long before its bucket starts a coarser tier releases it
 *   due lane  one topic for entries whose time has already passed
 *   waiting   one lane per database (`<prefix>.waiting.<database>`), read like the due lane: due
 *             entries of a database that does not answer move there (hold/expirer-sink.ts), so
 *             the ring and due partitions they came from are not held by one sick database
 *   shard     hash of the entity id: message key, partition (shard mod partitions), DB shard
 *
 * parseTopology checks each rule below and names every broken one at once, so an operator
 * fixes the file in one go. The proof that needs these rules is in router.ts (invariant I1).
 */
import { z } from 'zod';
import { ConfigError } from './errors';
import { deepFreeze } from './deep-freeze';
import { jsonDocument } from './json-document';
import { MAIN_DATABASE } from './entity-catalogue';

const DAY_MS = 86_400_000;
/** `waiting.<database>`, the database named as TB_DATABASES names them (config-schema.ts), or main. */
const WAITING_LANE = /^waiting\.[a-z0-9_]{1,16}$/;
// Kafka's own limit and alphabet for topic names.
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;

const count = z.number().int().min(1);
const duration = z.number().int().min(0);

const TierSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9]+$/, 'lower-case letters and digits only'),
    widthMs: count,
    // Every ring index is a topic; the cap catches a typo before it creates a million topics.
    ring: count.max(10_000),
    guard: count,
    leadMs: duration,
    partitions: count,
  })
  .strict();

const EventTopicSchema = z
  .object({
    type: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'upper-case letters, digits and _ only'),
    topic: z.string().regex(TOPIC_NAME, 'not a legal Kafka topic name'),
    partitions: count,
    retentionMs: count,
  })
  .strict();

const BaseSchema = z
  .object({
    prefix: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-" only'),
    shards: count,
    // The finest tier's releases are held until their entries fire: an entry beyond its horizon
    // would pin its partition's commit point until then. A coarser tier takes such entries, and
    // its cascader re-routes (and so commits) those still beyond every horizon.
    tiers: z
      .array(TierSchema)
      .min(2, 'at least two tiers: the finest holds entries until they fire, a coarser one takes (and re-routes) those beyond its horizon'),
    due: z.object({ partitions: count }).strict(),
    replayWindowMs: duration,
    dlq: z.object({ partitions: count, retentionMs: count }).strict(),
    // The topics of the entities file's events; an event not named here gets the default one
    // (withEventTopics, core/event-catalogue.ts): `<prefix>.events.<type>` with `eventDefaults`.
    events: z.array(EventTopicSchema).default([]),
    eventDefaults: z.object({ partitions: count, retentionMs: count }).strict().optional(),
  })
  .strict();

type RawTopology = z.output<typeof BaseSchema>;
/** The document as written (e.g. topics/topology.json). */
export type TopologyJson = z.input<typeof BaseSchema>;

export type Tier = Readonly<z.output<typeof TierSchema>>;
export type EventTopic = Readonly<z.output<typeof EventTopicSchema>>;
export type Topology = Readonly<{
  prefix: string;
  shards: number;
  tiers: readonly Tier[];
  due: Readonly<{ partitions: number }>;
  replayWindowMs: number;
  dlq: Readonly<{ partitions: number; retentionMs: number }>;
  events: readonly EventTopic[];
  /** The partitions and retention of an event topic the topology does not name (default: the due lane's partitions, 7 days). */
  eventDefaults?: Readonly<{ partitions: number; retentionMs: number }>;
}>;

export type TopicDeclaration = Readonly<{ topic: string; partitions: number; config: Readonly<Record<string, string>> }>;
export type ParsedTopic = Readonly<{ lane: 'ring'; tierIndex: number; ringIndex: number }> | Readonly<{ lane: 'due' }>;

/** Structure plus the cross-field rules; parseTopology is the way to use it. */
export const TopologySchema = BaseSchema.superRefine((t, ctx) => {
  for (const { path, message } of crossFieldProblems(t)) ctx.addIssue({ code: z.ZodIssueCode.custom, path, message });
});

/**
 * `json` is a parsed JSON value or the JSON text itself; `source` names where it came from
 * (a file path) for the error message. Returns a deeply frozen Topology or throws a
 * ConfigError whose `details.problems` lists every problem.
 */
export function parseTopology(json: unknown, source: string): Topology {
  const parsed = TopologySchema.safeParse(jsonDocument(json, `invalid topology in ${source}`));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid topology in ${source}: ${problems.join('; ')}`, { problems });
  }
  return deepFreeze(parsed.data);
}

type Problem = { path: (string | number)[]; message: string };

// Runs on partly invalid input too (zod refines values that only failed min/regex checks), so
// every rule guards against the zeros that the structural checks already reported.
function crossFieldProblems(t: RawTopology): Problem[] {
  const problems = [...t.tiers.flatMap((tier, i) => tierProblems(t, i)), ...coarsestTierProblems(t), ...duplicateEventTypes(t)];
  // Topic names only once the rest holds: they are built from it.
  return problems.length > 0 ? problems : topicNameProblems(t);
}

function tierProblems(t: RawTopology, i: number): Problem[] {
  const problems: Problem[] = [];
  const add = (field: string, message: string): void => void problems.push({ path: ['tiers', i, field], message });
  const tier = t.tiers[i]!;
  if (t.tiers.findIndex((other) => other.name === tier.name) < i) add('name', `duplicate tier name '${tier.name}'`);
  // The guard is the slack for disagreeing writers: bucket T is written until a clock reads
  // T + width, its topic's next lap (T + ring × width) only from T + (guard + 1) × width on.
  // So writers whose clocks (plus produce latency) differ by less than guard × width never
  // append the next lap before the current one (I1, proof in router.ts). guard ≥ 1 is the
  // schema's min; ring > guard leaves a horizon of at least one bucket.
  if (tier.ring <= tier.guard) add('ring', `ring (${tier.ring}) must be greater than guard (${tier.guard})`);
  const finer = t.tiers[i - 1];
  if (finer === undefined) {
    // Nothing finer to cascade into: a finest-tier release hands the bucket to the expirer,
    // which fires each entry at its own time (the database's clock the guard), so releasing
    // it early only has the entries read and queued before they fall due. Less than a width,
    // so a bucket is never released before the one before it has begun.
    if (tier.leadMs >= tier.widthMs) add('leadMs', `the finest tier's leadMs (${tier.leadMs}) must be less than its widthMs (${tier.widthMs})`);
    return problems;
  }
  if (tier.widthMs <= finer.widthMs) {
    add('widthMs', `widths must increase strictly: ${tier.widthMs} after ${finer.widthMs}`);
  } else if (finer.widthMs > 0 && tier.widthMs % finer.widthMs !== 0) {
    // Bucket ends must be finer bucket ends, or the bound below does not hold.
    add('widthMs', `width ${tier.widthMs} must be a multiple of the finer width ${finer.widthMs}`);
  }
  // A release at T − lead re-routes entries up to T + width; the finer tier must accept all
  // of them, or the cascade lands back in this tier and loops.
  const finerHorizon = horizonMs(finer);
  if (tier.widthMs + tier.leadMs > finerHorizon) {
    add('leadMs', `widthMs + leadMs (${tier.widthMs + tier.leadMs}) must be <= the horizon of tier '${finer.name}' (${finerHorizon})`);
  }
  return problems;
}

function coarsestTierProblems(t: RawTopology): Problem[] {
  const coarsestIndex = t.tiers.length - 1;
  const coarsest = t.tiers[coarsestIndex];
  if (coarsest === undefined || coarsest.widthMs <= 0 || coarsest.ring <= coarsest.guard) return [];
  // Entries beyond every horizon wait in the coarsest tier's last writable bucket and are
  // re-routed there on release; that bucket must then be a later one, or the cascader
  // re-reads its own output until the clock moves on.
  const leadBuckets = Math.ceil(coarsest.leadMs / coarsest.widthMs);
  if (coarsest.ring - coarsest.guard - 1 > leadBuckets) return [];
  return [
    {
      path: ['tiers', coarsestIndex, 'ring'],
      message: `the coarsest tier needs ring − guard − 1 (${coarsest.ring - coarsest.guard - 1}) > ceil(leadMs / widthMs) (${leadBuckets})`,
    },
  ];
}

function duplicateEventTypes(t: RawTopology): Problem[] {
  return t.events.flatMap((e, i) =>
    t.events.findIndex((other) => other.type === e.type) < i ? [{ path: ['events', i, 'type'], message: `duplicate event type '${e.type}'` }] : [],
  );
}

function topicNameProblems(t: RawTopology): Problem[] {
  const problems: Problem[] = [];
  const seenTopics = new Set<string>();
  for (const { topic } of declaredTopics(t)) {
    if (seenTopics.has(topic)) problems.push({ path: ['events'], message: `topic '${topic}' is declared twice` });
    if (!TOPIC_NAME.test(topic)) problems.push({ path: ['prefix'], message: `topic '${topic}' is longer than Kafka allows (249)` });
    seenTopics.add(topic);
  }
  return problems;
}

export function horizonMs(tier: Tier): number {
  return (tier.ring - tier.guard) * tier.widthMs;
}

/** Start of the bucket of `tier` that contains `timeMs`. */
export function bucketStartOf(tier: Tier, timeMs: number): number {
  return Math.floor(timeMs / tier.widthMs) * tier.widthMs;
}

/** Which topic of the ring holds bucket `bucketStartMs` (non-negative for times before 1970 too). */
export function ringIndex(tier: Tier, bucketStartMs: number): number {
  const n = Math.floor(bucketStartMs / tier.widthMs) % tier.ring;
  return n < 0 ? n + tier.ring : n;
}

// All names of a ring have the same length, so they sort in ring order.
function indexDigits(tier: Tier): number {
  return Math.max(2, String(tier.ring - 1).length);
}

export function ringTopic(topology: Pick<Topology, 'prefix'>, tier: Tier, index: number): string {
  return `${topology.prefix}.${tier.name}.${String(index).padStart(indexDigits(tier), '0')}`;
}

export function dueTopic(topology: Pick<Topology, 'prefix'>): string {
  return `${topology.prefix}.due`;
}

/** The waiting lane of `database`: its due entries while it does not answer. */
export function waitingTopic(topology: Pick<Topology, 'prefix'>, database: string): string {
  return `${topology.prefix}.waiting.${database}`;
}

export function dlqTopic(topology: Pick<Topology, 'prefix'>): string {
  return `${topology.prefix}.dlq`;
}

/** Where the outbox router's capture probes go (publish/capture-probe.ts): read by timebucket alone. */
export function probeTopic(topology: Pick<Topology, 'prefix'>): string {
  return `${topology.prefix}.outbox-probe`;
}

/** Probes are only ever read as they arrive: an hour covers any restart of a reader. */
const PROBE_RETENTION_MS = 3_600_000;

/** Message key = shard; the partition follows from it, so one shard is one partition's work. */
export function partitionOfShard(shard: number, partitions: number): number {
  return shard % partitions;
}

function topicConfig(retentionMs: number): Readonly<Record<string, string>> {
  return { 'cleanup.policy': 'delete', 'retention.ms': String(retentionMs) };
}

/**
 * Every topic the topology needs for the entities' `databases`, for the CLI to create idempotently.
 * Retention: a ring topic keeps a lap (ring × width: an entry is written at most one horizon
 * before its bucket and read by the bucket's end) plus the replay window; the due lane keeps
 * the replay window plus a day for consumers that were down; a waiting lane as long as the DLQ
 * (it holds a database's work for as long as the database is away).
 */
export function declaredTopics(topology: Topology, databases: readonly string[] = [MAIN_DATABASE]): TopicDeclaration[] {
  const topics: TopicDeclaration[] = [];
  for (const tier of topology.tiers) {
    const config = topicConfig(tier.ring * tier.widthMs + topology.replayWindowMs);
    for (let index = 0; index < tier.ring; index += 1) {
      topics.push({ topic: ringTopic(topology, tier, index), partitions: tier.partitions, config });
    }
  }
  topics.push({ topic: dueTopic(topology), partitions: topology.due.partitions, config: topicConfig(topology.replayWindowMs + DAY_MS) });
  for (const database of databases) {
    topics.push({ topic: waitingTopic(topology, database), partitions: topology.due.partitions, config: topicConfig(topology.dlq.retentionMs) });
  }
  topics.push({ topic: dlqTopic(topology), partitions: topology.dlq.partitions, config: topicConfig(topology.dlq.retentionMs) });
  topics.push({ topic: probeTopic(topology), partitions: 1, config: topicConfig(PROBE_RETENTION_MS) });
  for (const e of topology.events) topics.push({ topic: e.topic, partitions: e.partitions, config: topicConfig(e.retentionMs) });
  return topics;
}

/** Every ring topic of the tiers given (by index), in tier then ring order: what a hold stage subscribes to. */
export function ringTopics(topology: Topology, tierIndexes: readonly number[]): string[] {
  return tierIndexes.flatMap((i) => {
    const tier = topology.tiers[i]!;
    return Array.from({ length: tier.ring }, (_, index) => ringTopic(topology, tier, index));
  });
}

/** A ring topic or the due lane of this topology: what the hold stages read. */
export function isBucketLane(topology: Topology, topic: string): boolean {
  return parseTopic(topology, topic) !== undefined;
}

/** The lane of a topic name this topology declares, or undefined (DLQ, events, foreign topics). */
export function parseTopic(topology: Topology, topic: string): ParsedTopic | undefined {
  const head = `${topology.prefix}.`;
  if (!topic.startsWith(head)) return undefined;
  const rest = topic.slice(head.length);
  // A waiting lane is read as the due lane: its entries were due when they were moved there.
  if (rest === 'due' || WAITING_LANE.test(rest)) return { lane: 'due' };
  const match = /^([a-z0-9]+)\.([0-9]+)$/.exec(rest);
  if (match === null) return undefined;
  const [, name, digits] = match;
  const tierIndex = topology.tiers.findIndex((t) => t.name === name);
  const tier = topology.tiers[tierIndex];
  if (tier === undefined || digits === undefined || digits.length !== indexDigits(tier)) return undefined;
  const index = Number(digits);
  return index < tier.ring ? { lane: 'ring', tierIndex, ringIndex: index } : undefined;
}
