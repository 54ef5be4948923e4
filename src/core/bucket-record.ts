/**
 * The Kafka record for a bucket entry, routed at the writer's clock: topic from the router,
 * key = shard, partition = shard mod the lane's partitions (explicit, so it never depends on a
 * client's hash partitioner), and the bucket start in a header so holders need not recompute it.
 * The due time is never put in the record timestamp: brokers may reject far-future timestamps.
 * The catalogue decides the entry's wire version (bucket-entry.ts) and rejects unknown names.
 */
import { BucketEntry } from './bucket-entry';
import { encodeBucketEntry } from './bucket-entry-codec';
import { entityOf, type EntityCatalogue } from './entity-catalogue';
import { partitionOfRoute, route, shardOfEntry } from './router';
import type { Topology } from './topology';

export type BucketRecord = Readonly<{
  topic: string;
  partition: number;
  key: string;
  value: Buffer;
  headers: Readonly<Record<string, string>>;
}>;

export function bucketRecord(topology: Topology, catalogue: EntityCatalogue, entry: BucketEntry, nowMs: number): BucketRecord {
  const r = route(topology, entry.expireAtMs, nowMs);
  const shard = shardOfEntry(entityOf(catalogue, entry.entity), entry, topology.shards);
  return {
    topic: r.topic,
    partition: partitionOfRoute(topology, r, shard),
    key: String(shard),
    value: encodeBucketEntry(entry, catalogue),
    headers: r.lane === 'ring' ? { bucket_start: String(r.bucketStartMs), tier: r.tierName } : { tier: 'due' },
  };
}

/** Groups records per topic for one producer.sendBatch call. */
export function byTopic(records: readonly BucketRecord[]): Array<{ topic: string; messages: Array<Omit<BucketRecord, 'topic'>> }> {
  const grouped = new Map<string, Array<Omit<BucketRecord, 'topic'>>>();
  for (const { topic, ...message } of records) {
    const list = grouped.get(topic) ?? [];
    list.push(message);
    grouped.set(topic, list);
  }
  return [...grouped].map(([topic, messages]) => ({ topic, messages }));
}
