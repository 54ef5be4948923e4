/**
 * The router: which lane, tier and bucket an entry (entity id, expire time) goes to. Used by
 * the repartitioner for new entries and by the cascader for entries a coarser tier releases.
 *
 * Rules, with `now` the writer's clock:
 *   - expireAt <= now                      → the due lane.
 *   - otherwise the FINEST tier whose write window covers the entry's bucket: with
 *     T = bucket of expireAt and C = bucket of now (T ≥ C because expireAt > now),
 *     the tier accepts T iff T − C < horizon = (ring − guard) × width.
 *   - no tier covers it                    → the coarsest tier's last writable bucket
 *     C + horizon − width; its release re-routes the entry, and one still beyond every
 *     horizon goes back to the coarsest ring, to a later bucket (topology checks that).
 *   - releaseAt = bucket start − tier lead (0 for the finest tier: its bucket is released at
 *     its start and the consumer fires each entry at the entry's own expire time).
 *
 * Invariant I1: within every ring partition, bucket times never decrease in append order.
 * The ring consumer holds a partition by pausing at its head, which is only right if no
 * earlier bucket can follow a later one.
 *
 * Proof. Same topic, same tier of width w: buckets T and T' = T + k·ring·w, k ≥ 1 (nothing
 * else shares the topic). Every ring write of bucket T has C ≤ T and T − C ≤ horizon − w,
 * the clamp included.
 *   (1) A writer with clock c writes T only while c < T + w: C ≤ T gives c < C + w ≤ T + w.
 *       (For an entry in its own bucket, expireAt < T + w, so c ≥ T + w would mean due.)
 *   (2) It writes T' only once T' − C ≤ (ring − guard − 1)·w, i.e. C ≥ T + (guard + 1)·w
 *       (k = 1; more for k > 1), so c ≥ T + (guard + 1)·w.
 *   With one clock, every write of T precedes every write of T'. With clocks c = t + δ over
 *   true time t: the last write of T is at t1 < T + w − δ1, the first write of T' at
 *   t2 ≥ T + (guard + 1)·w − δ2, so t2 − t1 > guard·w − (δ2 − δ1) > 0 whenever writers'
 *   clocks differ by less than guard·w. Differences in produce latency eat into the same
 *   slack, so the budget is: clock skew + latency spread < guard × finest width.
 *   Cascaded writes are ordinary writes by the cascader's clock, so the proof covers them.
 */
import type { BucketEntry } from './bucket-entry';
import { locationOf, type Entity, type EntityCatalogue } from './entity-catalogue';
import { ConfigError } from './errors';
import { bucketStartOf, dueTopic, horizonMs, partitionOfShard, ringIndex, ringTopic, type Topology } from './topology';

export type Route =
  | Readonly<{ lane: 'due'; topic: string }>
  | Readonly<{ lane: 'ring'; tierIndex: number; tierName: string; topic: string; bucketStartMs: number; releaseAtMs: number }>;

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const utf8 = new TextEncoder();

/**
 * The shard of an entity: FNV-1a 32-bit over the UTF-8 bytes of its decimal id, unsigned,
 * mod shards. It decides message keys, so partitions: one entity's entries share a partition.
 * The hash must never change. `shards` may: entries in flight keyed by the old count are held
 * where they are under their new shard (core/held-record.ts), and new ones go by the new count.
 */
export function shardOf(entityId: string, shards: number): number {
  if (!Number.isSafeInteger(shards) || shards < 1) throw new RangeError(`shards must be a positive integer, got ${shards}`);
  let hash = FNV_OFFSET_BASIS;
  // Ids are decimal text: ASCII, where each char code is its UTF-8 byte. Hashed off the string,
  // not a Uint8Array allocated per entry (the expirer's and the repartitioner's hot path).
  for (let i = 0; i < entityId.length; i++) {
    const code = entityId.charCodeAt(i);
    if (code > 0x7f) return utf8Hash(entityId) % shards;
    hash = Math.imul(hash ^ code, FNV_PRIME) >>> 0;
  }
  return hash % shards;
}

function utf8Hash(entityId: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of utf8.encode(entityId)) {
    hash = Math.imul(hash ^ byte, FNV_PRIME) >>> 0;
  }
  return hash;
}

/**
 * The shard of an entry. An entity on one database: shardOf(id), as ever. A spread entity on D
 * databases: the shards are dealt out by database, shard mod D = the database's index, so that
 * with partition counts that are multiples of D one partition holds one database's rows only and
 * a database that is down holds only its own partitions (the others keep transitioning).
 * Within a database, the id's hash spreads rows over its shards as usual. Needs D <= shards.
 * A digested reminder: shardOf(its user).
 */
export function shardOfEntry(entity: Entity, entry: Pick<BucketEntry, 'id' | 'at' | 'remind'>, shards: number): number {
  // A digested reminder goes by its user, so that one partition holds a user's reminders for a
  // window (digests are of entities in one table: core/entity-file.ts).
  if (entry.remind?.user !== undefined) return shardOf(entry.remind.user, shards);
  if (entity.databases.length === 1) return shardOf(entry.id, shards);
  const d = entity.databases.length;
  if (shards < d) throw new RangeError(`entity '${entity.name}' lives on ${d} databases but the topology has ${shards} shards`);
  const database = locationOf(entity, entry.at).database;
  return entity.databases.indexOf(database) + d * shardOf(entry.id, Math.floor(shards / d));
}

/**
 * Start-up check: every spread entity has at least a shard per database (shardOfEntry). A lane
 * whose partition count is not a multiple of an entity's databases is allowed: its partitions mix
 * databases, which is still exact; only the isolation of a database that is down is lost.
 */
export function assertShardsFit(catalogue: EntityCatalogue, topology: Topology): void {
  const problems = catalogue.entities
    .filter((e) => e.databases.length > topology.shards)
    .map((e) => `entity '${e.name}' lives on ${e.databases.length} databases but the topology has ${topology.shards} shards`);
  if (problems.length > 0) throw new ConfigError(`the topology does not fit the entities file: ${problems.join('; ')}`, { problems });
}

/** Where an entry expiring at `expireAtMs` goes when the writer's clock reads `nowMs`. */
export function route(topology: Topology, expireAtMs: number, nowMs: number): Route {
  // Programmer errors: decoded rows carry integral epoch milliseconds.
  if (!Number.isSafeInteger(expireAtMs)) throw new RangeError(`expireAtMs must be an integer, got ${expireAtMs}`);
  if (!Number.isSafeInteger(nowMs)) throw new RangeError(`nowMs must be an integer, got ${nowMs}`);
  if (expireAtMs <= nowMs) return { lane: 'due', topic: dueTopic(topology) };
  const { tiers } = topology;
  for (let tierIndex = 0; tierIndex < tiers.length; tierIndex += 1) {
    const tier = tiers[tierIndex];
    if (tier === undefined) break;
    const bucket = bucketStartOf(tier, expireAtMs);
    if (bucket - bucketStartOf(tier, nowMs) < horizonMs(tier)) return ringRoute(topology, tierIndex, bucket);
  }
  const coarsestIndex = tiers.length - 1;
  const coarsest = tiers[coarsestIndex];
  if (coarsest === undefined) throw new RangeError('topology has no tiers');
  return ringRoute(topology, coarsestIndex, bucketStartOf(coarsest, nowMs) + horizonMs(coarsest) - coarsest.widthMs);
}

function ringRoute(topology: Topology, tierIndex: number, bucketStartMs: number): Route {
  const tier = topology.tiers[tierIndex];
  if (tier === undefined) throw new RangeError(`no tier ${tierIndex}`);
  return {
    lane: 'ring',
    tierIndex,
    tierName: tier.name,
    topic: ringTopic(topology, tier, ringIndex(tier, bucketStartMs)),
    bucketStartMs,
    releaseAtMs: bucketStartMs - tier.leadMs,
  };
}

/** The partition a routed entry of `shard` is appended to. */
export function partitionOfRoute(topology: Topology, r: Route, shard: number): number {
  if (r.lane === 'due') return partitionOfShard(shard, topology.due.partitions);
  const tier = topology.tiers[r.tierIndex];
  if (tier === undefined) throw new RangeError(`no tier ${r.tierIndex}`);
  return partitionOfShard(shard, tier.partitions);
}
