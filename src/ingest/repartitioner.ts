/**
 * CDC topics → bucket topics. Each Debezium change of a coupon or order that makes it expirable
 * (or moves its expire_time) becomes one bucket entry, routed at this instance's clock. A batch
 * is committed only after its records are acknowledged by the broker (acks = all): a crash
 * re-reads and re-routes it, and duplicates are harmless downstream.
 * Undecodable or invalid records go to the DLQ with the reason; the partition moves on (I5).
 */
import type { Consumer, EachBatchPayload, Producer } from 'kafkajs';
import type { Clock } from '../core/clock';
import { decodeCdcValue } from '../core/cdc-envelope';
import { entityOfTable, entryFromChange, EntityType } from '../core/bucket-entry';
import { bucketRecord, byTopic, BucketRecord } from '../core/bucket-record';
import type { Topology } from '../core/topology';
import type { DlqWriter } from '../kafka/dlq-writer';
import { groupJoined } from '../kafka/group-joined';
import type { Logger } from '../ops/logger';

export type RepartitionerOptions = Readonly<{
  consumer: Consumer;
  producer: Producer;
  cdcTopics: Readonly<Record<string, EntityType>>;
  topology: Topology;
  dlq: DlqWriter;
  clock: Clock;
  logger: Logger;
  onRouted?: (lane: string, count: number) => void;
}>;

export class Repartitioner {
  private started = false;
  private stopped = false;
  private joinedGroup: Promise<void> = new Promise(() => undefined);

  constructor(private readonly opts: RepartitionerOptions) {}

  /** The entity of a CDC topic named `<prefix>.<db>.<table>`. */
  static entityOfTopic(topic: string): EntityType | undefined {
    return entityOfTable(topic.slice(topic.lastIndexOf('.') + 1));
  }

  /** Resolves once the consumer has joined its group. */
  joined(): Promise<void> {
    return this.joinedGroup;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { consumer } = this.opts;
    this.joinedGroup = groupJoined(consumer);
    await consumer.connect();
    await consumer.subscribe({ topics: Object.keys(this.opts.cdcTopics), fromBeginning: true });
    await consumer.run({ eachBatchAutoResolve: true, eachBatch: (payload) => this.onBatch(payload) });
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    await this.opts.consumer.disconnect();
  }

  private async onBatch({ batch, heartbeat }: EachBatchPayload): Promise<void> {
    const entity = this.opts.cdcTopics[batch.topic];
    const now = this.opts.clock.now();
    const records: BucketRecord[] = [];
    for (const message of batch.messages) {
      try {
        if (entity === undefined) throw new Error(`no entity for topic ${batch.topic}`);
        const event = decodeCdcValue(message.value);
        if (event.kind === 'tombstone') continue;
        const entry = entryFromChange(entity, event);
        if (entry !== null) records.push(bucketRecord(this.opts.topology, entry, now));
      } catch (err) {
        await this.opts.dlq.send({ topic: batch.topic, partition: batch.partition, message, error: err });
      }
    }
    if (records.length > 0) {
      // Throwing here fails the batch: kafkajs retries it and nothing is committed.
      await this.opts.producer.sendBatch({ acks: -1, topicMessages: byTopic(records) });
      for (const r of records) this.opts.onRouted?.(r.headers['tier'] ?? 'due', 1);
    }
    await heartbeat();
  }
}
