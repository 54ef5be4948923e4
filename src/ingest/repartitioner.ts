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
import { entryFromChange, EntityType } from '../core/bucket-entry';
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
  /** Topics that exist now: Debezium creates a table's topic with its first change. */
  listTopics: () => Promise<string[]>;
}>;

export class Repartitioner {
  private started = false;
  private stopped = false;
  private joinedGroup: Promise<void> = new Promise(() => undefined);
  private running: Promise<void> = Promise.resolve();
  private waitTimer?: NodeJS.Timeout;
  private wake?: () => void;

  constructor(private readonly opts: RepartitionerOptions) {}

  /** Resolves once the consumer has joined its group. */
  joined(): Promise<void> {
    return this.joinedGroup;
  }

  /**
   * Returns at once; consumption begins when every CDC topic exists (a kafkajs subscription to
   * a missing topic fails, and topics created later are never picked up). Until then readiness
   * stays false and a warning repeats, naming the missing topics.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { consumer } = this.opts;
    this.joinedGroup = groupJoined(consumer);
    this.running = this.consumeWhenTopicsExist().catch(async (err: unknown) => {
      this.opts.logger.error({ err }, 'repartitioner failed to start');
      await this.opts.consumer.disconnect().catch(() => undefined);
    });
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    if (this.waitTimer) clearTimeout(this.waitTimer);
    this.wake?.();
    await this.running;
    await this.opts.consumer.disconnect();
  }

  private async consumeWhenTopicsExist(): Promise<void> {
    const wanted = Object.keys(this.opts.cdcTopics);
    for (let attempt = 0; !this.stopped; attempt += 1) {
      const existing = new Set(await this.opts.listTopics().catch(() => [] as string[]));
      const missing = wanted.filter((t) => !existing.has(t));
      if (missing.length === 0) break;
      if (attempt % 20 === 0) this.opts.logger.warn({ missing }, 'waiting for CDC topics (Debezium creates each with its table\'s first change)');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.waitTimer = setTimeout(resolve, 500);
      });
    }
    if (this.stopped) return;
    const { consumer } = this.opts;
    await consumer.connect();
    await consumer.subscribe({ topics: wanted, fromBeginning: true });
    await consumer.run({ eachBatchAutoResolve: true, eachBatch: (payload) => this.onBatch(payload) });
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
