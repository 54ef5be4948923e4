/**
 * CDC topics → bucket topics. Each Debezium change of a catalogue entity's row becomes one bucket
 * entry per transition it makes due at a new time (core/bucket-entry.ts: the row enters a
 * from-state, or its due column moves while in one), each routed at this instance's clock. A batch
 * is committed only after its records are acknowledged by the broker (acks = all): a crash
 * re-reads and re-routes it, and duplicates are harmless downstream. Appends are bounded in
 * time (kafka/send-routed.ts), so a slow send cannot land a ring entry a lap late (I1).
 *
 * Undecodable or invalid records go to the DLQ with the reason, all of a batch in as few sends
 * as possible; the partition moves on (I5). Decoding is CPU work, so a large batch heartbeats
 * as it goes: a poison storm cannot outlast the session and loop through rebalances.
 *
 * Lifecycle, watch, failure and stop: runtime/consumer-base.ts (FAILED when the kafkajs consumer
 * crashed for good, or could not start).
 */
import { retryHeartbeating } from '../kafka/heartbeating';
import type { Consumer, EachBatchPayload, Producer } from 'kafkajs';
import type { Clock } from '../core/clock';
import { decodeCdcValue } from '../core/cdc-envelope';
import { BucketEntry, entriesFromChange, type SkipCounter } from '../core/bucket-entry';
import { findEntity, type EntityCatalogue } from '../core/entity-catalogue';
import { CdcInvalidError, ConfigError } from '../core/errors';
import { ConsumerBase } from '../runtime/consumer-base';
import { WakeableSleeps } from '../runtime/wakeable-sleeps';
import type { Topology } from '../core/topology';
import type { DlqRecord, DlqWriter } from '../kafka/dlq-writer';
import { groupJoined } from '../kafka/group-joined';
import { watchConsumer } from '../kafka/consumer-watch';
import { appendBudgetMs, sendRouted, SendRoutedOptions } from '../kafka/send-routed';
import type { Logger } from '../ops/logger';
import { RetryPolicies, type RetryPolicy } from '../runtime/retry-policy';
import { locationOfChange, type CdcTopic } from './cdc-topics';

export type RepartitionerOptions = Readonly<{
  consumer: Consumer;
  /** The consumer group's id, for logs and health reasons. */
  group: string;
  producer: Pick<Producer, 'sendBatch'>;
  /** CDC topic → the catalogue entity whose table it captures (ingest/cdc-topics.ts). */
  cdcTopics: Readonly<Record<string, CdcTopic>>;
  /** Encodes the entries: their wire version depends on the transition (core/bucket-entry.ts). */
  catalogue: EntityCatalogue;
  topology: Topology;
  dlq: DlqWriter;
  clock: Clock;
  logger: Logger;
  onRouted?: (lane: string, count: number) => void;
  /** A fire point that got no entry (past when the row appeared, or no user to digest by). */
  onReminderSkipped?: SkipCounter;
  /** Topics that exist now: Debezium creates a table's topic with its first change. */
  listTopics: () => Promise<string[]>;
  /** /healthz fails when the consume loop shows no sign of life for this long. */
  stallMs: number;
  /**
   * Where a group without committed offsets starts. 'latest' (the default) skips CDC history: a
   * new deployment on a database with millions of finished rows would otherwise route them all
   * into the due lane for no-op transactions; the rows that exist are scheduled by backfill.
   */
  startFrom: 'latest' | 'earliest';
  /**
   * With 'latest', for a new group: commits the start positions taken when the process started
   * (kafka/pin-group-start.ts) before joining, so nothing written while it starts up is skipped.
   */
  pinNewGroup?: () => Promise<string>;
  /** How failed appends are retried inside the batch (default RetryPolicies.append). */
  sendRetry?: RetryPolicy;
}>;

// Heartbeats are rate-limited by kafkajs (heartbeatInterval), so asking often costs nothing.
const heartbeatEvery = 500;

export class Repartitioner extends ConsumerBase {
  private readonly routing: SendRoutedOptions;
  /** The start-up: waiting for the CDC topics, then the consumer's connect, subscribe and run. */
  private startingUp: Promise<void> = Promise.resolve();
  /** The waits for the CDC topics, which stop() cuts short. */
  private readonly sleeps = new WakeableSleeps();
  /** Messages behind the high watermark after the last batch, per topic-partition held. */
  private readonly lagByPartition = new Map<string, number>();

  constructor(private readonly opts: RepartitionerOptions) {
    super({ ...opts, failedMessage: 'repartitioner FAILED' });
    // Checked once here: an entity the catalogue does not hold would fail every encode, and a
    // failing send is retried for ever, freezing its partition.
    const foreign = Object.entries(opts.cdcTopics)
      .map(([topic, t]) => [topic, t.entity] as const)
      .filter(([, e]) => findEntity(opts.catalogue, e.name) !== e);
    if (foreign.length > 0) {
      const problems = foreign.map(([topic, e]) => `cdcTopics.${topic}: entity '${e.name}' is not the catalogue's (${opts.catalogue.source})`);
      throw new ConfigError(`repartitioner: ${problems.join('; ')}`, { problems });
    }
    const { producer, topology, catalogue, clock, logger } = opts;
    this.routing = { producer, topology, catalogue, clock, appendBudgetMs: appendBudgetMs(topology), logger };
  }

  /**
   * CDC messages not yet routed, summed over the partitions this member holds, as of the last
   * batch of each (kafkajs reports the high watermark with every batch). A partition that
   * receives nothing keeps its last figure: 0 once caught up. A stalled loop shows in /healthz.
   */
  cdcLag(): number {
    let sum = 0;
    for (const lag of this.lagByPartition.values()) sum += lag;
    return sum;
  }

  /**
   * Returns at once; consumption begins when every CDC topic exists (a kafkajs subscription to
   * a missing topic fails, and topics created later are never picked up). Until then readiness
   * stays false and a warning repeats, naming the missing topics; health stays green (waiting
   * for Debezium to create them is not a stall).
   */
  async start(): Promise<void> {
    if (!this.begin(groupJoined(this.opts.consumer))) return;
    this.startingUp = this.consumeWhenTopicsExist().catch(async (err: unknown) => {
      this.opts.logger.error({ err }, 'repartitioner failed to start');
      await this.opts.consumer.disconnect().catch(() => undefined);
      this.fail(err instanceof Error ? err : new Error(String(err)));
    });
  }

  protected halt(): void {
    this.sleeps.wakeAll();
  }

  protected settle(): readonly [string, Promise<unknown>] {
    return ['start-up', this.startingUp];
  }

  private async consumeWhenTopicsExist(): Promise<void> {
    const wanted = Object.keys(this.opts.cdcTopics);
    for (let attempt = 0; this.active; attempt += 1) {
      const existing = new Set(await this.opts.listTopics().catch(() => [] as string[]));
      const missing = wanted.filter((t) => !existing.has(t));
      if (missing.length === 0) break;
      if (attempt % 20 === 0) this.opts.logger.warn({ missing }, "waiting for CDC topics (Debezium creates each with its table's first change)");
      await this.sleeps.sleep(500);
    }
    if (!this.active) return;
    const { consumer } = this.opts;
    this.watch(watchConsumer(consumer, { group: this.opts.group, clock: this.opts.clock, stallMs: this.opts.stallMs }));
    // A rebalance may move partitions away: their last figures are no longer this member's.
    consumer.on(consumer.events.GROUP_JOIN, () => this.lagByPartition.clear());
    if (this.opts.startFrom === 'latest' && this.opts.pinNewGroup) {
      const outcome = await this.opts.pinNewGroup().catch((err: unknown) => {
        // Best effort: `topics apply` pinned it already in a normal deployment.
        this.opts.logger.warn({ err }, 'could not pin the new group at the end of the CDC topics; it starts where it first fetches');
        return 'failed';
      });
      if (outcome === 'pinned')
        this.opts.logger.info({ group: this.opts.group }, 'new group: starts at the current end of the CDC topics (existing rows: timebucket backfill)');
    }
    await consumer.connect();
    await consumer.subscribe({ topics: wanted, fromBeginning: this.opts.startFrom === 'earliest' });
    await consumer.run({ eachBatchAutoResolve: true, eachBatch: (payload) => this.onBatch(payload) });
  }

  private async onBatch({ batch, heartbeat }: EachBatchPayload): Promise<void> {
    // Before the work, the whole batch counts as behind: if routing fails (and kafkajs retries
    // the batch), the figure shows the lag that is waiting, not the last success's.
    const partitionKey = `${batch.topic}:${batch.partition}`;
    const first = batch.messages[0];
    if (first !== undefined) this.lagByPartition.set(partitionKey, Math.max(0, Number(batch.highWatermark) - Number(first.offset)));
    const cdcTopic = Object.hasOwn(this.opts.cdcTopics, batch.topic) ? this.opts.cdcTopics[batch.topic] : undefined;
    const entries: BucketEntry[] = [];
    const rejected: DlqRecord[] = [];
    let decoded = 0;
    for (const message of batch.messages) {
      try {
        // Unreachable while the subscription is cdcTopics' keys; if not, the records are data
        // this stage cannot read, and the partition must still move on (I5).
        if (cdcTopic === undefined) throw new CdcInvalidError(`no entity for topic ${batch.topic}`, { topic: batch.topic });
        const event = decodeCdcValue(message.value);
        if (event.kind === 'tombstone') continue;
        // One change may make several transitions due (each its own entry, routed on its own).
        entries.push(...entriesFromChange(cdcTopic.entity, event, locationOfChange(cdcTopic, event), this.opts.onReminderSkipped));
      } catch (err) {
        rejected.push({ topic: batch.topic, partition: batch.partition, message, error: err });
      }
      decoded += 1;
      if (decoded % heartbeatEvery === 0) await heartbeat();
    }
    // Failed appends are retried here, heartbeating, rather than thrown to kafkajs: it restarts
    // a consumer only for errors it calls retriable, and a producer refused after a broker
    // failover (OUT_OF_ORDER_SEQUENCE_NUMBER) is not one of them, though a new producer is
    // accepted. What is thrown at last fails the batch: nothing is committed, and the DLQ and
    // the rings may see duplicates, which are harmless.
    if (rejected.length > 0) await this.appendWithRetry('dead-lettering undecodable CDC records', () => this.opts.dlq.sendAll(rejected), heartbeat);
    if (entries.length > 0) {
      const records = await this.appendWithRetry('routing CDC changes', () => sendRouted(this.routing, entries), heartbeat);
      for (const r of records) this.opts.onRouted?.(r.headers['tier'] ?? 'due', 1);
    }
    const last = batch.messages.at(-1);
    if (last !== undefined) this.lagByPartition.set(partitionKey, Math.max(0, Number(batch.highWatermark) - Number(last.offset) - 1));
    await heartbeat();
  }

  private appendWithRetry<T>(what: string, work: () => Promise<T>, heartbeat: () => Promise<void>): Promise<T> {
    const { sendRetry: policy = RetryPolicies.append, logger } = this.opts;
    return retryHeartbeating(work, heartbeat, { policy, what, logger, keepGoing: () => this.active });
  }
}
