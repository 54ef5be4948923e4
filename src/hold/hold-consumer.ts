/**
 * A consumer over ring (or due-lane) topics that holds each partition until its head is due:
 *
 *   head not yet released → pause the partition, resume it by timer at the release time
 *   head released         → hand it to the sink (which fires it, or re-routes it) and read on
 *   sink finished         → commit only the contiguous finished prefix (OffsetTracker)
 *   memory cap reached    → pause, resume once the partition drains below half
 *   record misplaced      → handed at once to the `reroute` sink, which writes it where this
 *                           process's router puts it (a topology change, a writer clock ahead)
 *   record unreadable     → DLQ with the reason (held-record.ts), the partition moves on (I5)
 *
 * Where reading resumes. The read position of a partition is kafkajs's resolved offset: the
 * next fetch of a partition starts after the last offset resolved, and kafkajs fetches again
 * only after every batch of the previous fetch was handled. Offsets are resolved only as
 * messages are taken, so a paused partition resumes exactly at its held head. There is no
 * consumer.seek() anywhere: kafkajs queues seeks in a map that survives a rejoin and applies
 * them to the next generation, where a stale seek beats the committed offset and skips the
 * released-but-unfinished entries dropped at the rejoin (they would never be re-read, I3).
 * So after every rejoin the position is the committed offset, and only that.
 *
 * Holding is recomputed, never remembered: after every rebalance (GROUP_JOIN) all in-memory
 * state and timers are dropped, every assigned partition is resumed, and consumption restarts
 * from the committed offsets; the first undue head pauses it again. Client pause state is never
 * trusted across rebalances or restarts. Nothing sleeps inside the handler (heartbeats come
 * from the consume loop). Invariant I1 (bucket times never decrease within a ring partition)
 * is what makes "the head is not due, so nothing behind it is" true.
 *
 * Lifecycle, watch, failure and stop: runtime/consumer-base.ts (FAILED when the kafkajs consumer
 * crashed for good; stop() commits what is finished, leaves the group and closes both sinks).
 *
 * Why one file of nearly 400 lines: the batch handler, the timers and the rebalance reset share
 * the per-partition state, and "recomputed, never remembered" is checkable only with all three
 * in sight. What stands alone is apart: offset-tracker.ts, core/held-record.ts, park-to-dlq.ts.
 */
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { Clock, timerDelay } from '../core/clock';
import type { HeldMessage, HeldRecordReader } from '../core/held-record';
import { ConsumerBase } from '../runtime/consumer-base';
import { OffsetTracker } from './offset-tracker';
import type { DlqWriter } from '../kafka/dlq-writer';
import { retryHeartbeating } from '../kafka/heartbeating';
import { groupJoined } from '../kafka/group-joined';
import { watchConsumer } from '../kafka/consumer-watch';
import type { Logger } from '../ops/logger';
import { RetryPolicies, type RetryPolicy } from '../runtime/retry-policy';

export type { HeldMessage } from '../core/held-record';

export interface HoldSink {
  /** Takes a released message and calls done() once it is finished. */
  take(msg: HeldMessage, done: () => void): void;
  /** Forgets everything not yet finished (the partitions are re-read after a rebalance). */
  reset(): void;
  /** Entries taken whose time has come but are not finished (for the due-lag metric). */
  dueCount(now: number): number;
  /** Forgets what is unfinished and stops its timers for good: the consumer's stop() does it, as the sink's one owner. */
  close(): void;
}

export type HoldStats = Readonly<{
  heldPartitions: number;
  inMemory: number;
  largestPartitionInMemory: number;
  dueLag: number;
  /** The part of dueLag not yet read: unread messages of partitions that are not held (past the memory cap, or not fetched yet). */
  unreadDue: number;
}>;

export type HoldConsumerOptions = Readonly<{
  consumer: Consumer;
  /** The consumer group's id, for logs and health reasons. */
  group: string;
  topics: readonly string[];
  /** Decodes and checks a record (held-record.ts); a throw sends the record to the DLQ. */
  read: HeldRecordReader;
  sink: HoldSink;
  /**
   * Takes the entries the reader finds misplaced (HeldMessage.misplaced): released at once and
   * routed again (a CascaderSink), finished like any other entry once its new record is written.
   */
  reroute: HoldSink;
  dlq: DlqWriter;
  /** How a failed dead-letter write is retried (default RetryPolicies.append, as the repartitioner's). */
  dlqRetry?: RetryPolicy;
  clock: Clock;
  maxInMemoryPerPartition: number;
  commitIntervalMs: number;
  /** /healthz fails when the consume loop shows no sign of life for this long. */
  stallMs: number;
  /**
   * stop() waits at most this long for its last commit, and as long again for the group to be
   * left (kafkajs's disconnect waits on a coordinator that may be gone); then it gives up on
   * them. Default 10 s.
   */
  stopDeadlineMs?: number;
  logger: Logger;
  /**
   * The partitions' current ends (the admin client's fetchTopicOffsets). A partition paused at
   * the memory cap is not fetched, so its end is known only from this; without it, due lag
   * stops growing at the cap (a pause or a long outage would look like a plateau).
   */
  fetchEnds?: (topic: string) => Promise<ReadonlyArray<{ partition: number; high: string }>>;
  /** How often the ends of partitions paused at the cap are refreshed (default 5 s). */
  endsRefreshMs?: number;
  /**
   * When a released partition's unread messages count as due lag: at the release (the
   * cascader: re-routing is due then), or once the bucket of the last message taken has begun
   * (the expirer: the finest tier is released `leadMs` early, and its entries fall due at their
   * own times, none before their bucket starts). Default 'release'.
   */
  dueFrom?: 'release' | 'bucket';
}>;

type PartitionState = {
  readonly topic: string;
  readonly partition: number;
  tracker: OffsetTracker;
  resumeTimer?: NodeJS.Timeout;
  heldUntil?: number;
  waitingForDrain: boolean;
  dirty: boolean;
  /** An offset whose commit failed, to send again with the next commit. */
  unacked?: string;
  /** From the last batch: the partition's end, and the next offset to read. */
  highWatermark: number;
  nextOffset: number;
  /** The bucket start of the last message taken: nothing unread behind it is due before it. */
  lastBucketStartMs: number;
};

export class HoldConsumer extends ConsumerBase {
  private generation = 0;
  private partitions = new Map<string, PartitionState>();
  private commitInFlight: Promise<void> = Promise.resolve();

  constructor(private readonly opts: HoldConsumerOptions) {
    super({ ...opts, failedMessage: 'consumer crashed and will not restart: stage FAILED' });
  }

  /**
   * Due lag: released-but-unfinished entries in memory, plus unread messages of partitions that
   * are not held. A held partition's unread messages are not due (invariant I1: nothing behind an
   * undue head is due), which is exactly what raw consumer lag gets wrong.
   */
  stats(): HoldStats {
    let heldPartitions = 0;
    let inMemory = 0;
    let largestPartitionInMemory = 0;
    const now = this.opts.clock.now();
    for (const p of this.partitions.values()) {
      inMemory += p.tracker.inFlight;
      largestPartitionInMemory = Math.max(largestPartitionInMemory, p.tracker.inFlight);
      if (p.heldUntil !== undefined) heldPartitions += 1;
    }
    const unreadDue = this.unreadDue(now);
    return {
      heldPartitions,
      inMemory,
      largestPartitionInMemory,
      dueLag: unreadDue + this.opts.sink.dueCount(now) + this.opts.reroute.dueCount(now),
      unreadDue,
    };
  }

  /** Unread messages of partitions that are not held (the expirer's pacing counts them in its budget). */
  unreadDue(now = this.opts.clock.now()): number {
    const byBucket = this.opts.dueFrom === 'bucket';
    let unread = 0;
    for (const p of this.partitions.values()) {
      if (p.heldUntil === undefined && (!byBucket || p.lastBucketStartMs <= now)) unread += Math.max(0, p.highWatermark - p.nextOffset);
    }
    return unread;
  }

  async start(): Promise<void> {
    const { consumer } = this.opts;
    if (!this.begin(groupJoined(consumer))) return;
    consumer.on(consumer.events.GROUP_JOIN, (e) => this.onGroupJoin(e.payload.memberAssignment));
    this.watch(watchConsumer(consumer, { group: this.opts.group, clock: this.opts.clock, stallMs: this.opts.stallMs }));
    await this.startConsumer(async () => {
      await consumer.connect();
      await consumer.subscribe({ topics: [...this.opts.topics], fromBeginning: true });
      const eachBatch = (payload: EachBatchPayload) => this.onBatch(payload);
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 4, eachBatch });
    });
    this.every(this.opts.commitIntervalMs, () => this.commitDirty());
    if (this.opts.fetchEnds) this.every(this.opts.endsRefreshMs ?? 5_000, () => this.refreshCappedEnds());
  }

  protected halt(): void {
    for (const p of this.partitions.values()) if (p.resumeTimer) clearTimeout(p.resumeTimer);
  }

  protected settle(): readonly [string, Promise<unknown>] {
    return ['last commit', this.commitDirty()];
  }

  /** The consumer is the sinks' one owner. */
  protected override release(): void {
    this.opts.sink.close();
    this.opts.reroute.close();
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    this.generation += 1;
    for (const p of this.partitions.values()) if (p.resumeTimer) clearTimeout(p.resumeTimer);
    this.partitions.clear();
    this.opts.sink.reset();
    this.opts.reroute.reset();
    const topics = Object.entries(assignment).map(([topic, partitions]) => ({ topic, partitions }));
    if (topics.length > 0) this.opts.consumer.resume(topics);
    this.opts.logger.info({ generation: this.generation, assignment }, 'assignment changed: holding recomputed from committed offsets');
  }

  private partition(topic: string, partition: number): PartitionState {
    const key = `${topic}:${partition}`;
    let p = this.partitions.get(key);
    if (p === undefined) {
      p = { topic, partition, tracker: new OffsetTracker(), waitingForDrain: false, dirty: false, highWatermark: 0, nextOffset: 0, lastBucketStartMs: 0 };
      this.partitions.set(key, p);
    }
    return p;
  }

  private async onBatch({ batch, resolveOffset, heartbeat, pause, isRunning }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    const generation = this.generation;
    const state = this.partition(topic, partition);
    const now = this.opts.clock.now();
    state.highWatermark = Number(batch.highWatermark);
    // Due lag counts from where this batch starts, not from 0 (a fresh state after a rejoin
    // would otherwise report the whole partition as due lag until its first message is taken).
    const first = batch.messages[0];
    if (first !== undefined) state.nextOffset = Math.max(state.nextOffset, Number(first.offset));
    for (const message of batch.messages) {
      if (!isRunning() || generation !== this.generation) return;
      if (this.overCap(state)) {
        // Bounded memory: stop reading until the partition drains (see resumeIfDrained). The
        // message is not resolved, so reading resumes at it.
        pause();
        state.waitingForDrain = true;
        return;
      }
      const held = await this.read(topic, partition, message, now, this.ownedCheck(isRunning, generation), heartbeat);
      // Its dead-letter write given up (stopping, or the partitions moved): unresolved, so read again.
      if (held === 'abandoned') return;
      if (held === 'dead-lettered') {
        // Sent to the DLQ: finished, the partition moves on (invariant I5).
        state.tracker.add(message.offset);
        state.tracker.markDone(message.offset);
        state.dirty = true;
        state.nextOffset = Number(message.offset) + 1;
        resolveOffset(message.offset);
        continue;
      }
      if (held.releaseAtMs > now) {
        this.hold(state, held.releaseAtMs, pause, generation);
        return;
      }
      const { offset } = message;
      state.tracker.add(offset);
      state.nextOffset = Number(offset) + 1;
      resolveOffset(offset);
      // done() closes over the offset, not the message: a message's buffers are slices of its
      // whole fetch response, which an unfinished entry would otherwise keep alive.
      const done = () => this.done(generation, topic, partition, offset);
      if (held.misplaced !== undefined) {
        // Not this partition's bucket order: it says nothing of what follows (lastBucketStartMs).
        this.opts.logger.debug({ topic, partition, offset, reason: held.misplaced }, 'misplaced entry re-routed');
        this.opts.reroute.take(held, done);
        continue;
      }
      state.lastBucketStartMs = held.bucketStartMs;
      this.opts.sink.take(held, done);
    }
    await heartbeat();
  }

  /**
   * Pauses at an undue head; the unresolved head is where the next fetch starts (no seek).
   * The timer resumes through the consumer, never through the function pause() returns: kafkajs
   * creates that one beside its resolveOffset, so it keeps the whole batch alive (every message
   * fetched behind the head, and through their buffers the fetch response they came in) for as
   * long as the partition is held: up to a MiB per partition, for minutes or hours, on every
   * held partition at once (the scheduled-ahead bench: 670 MiB of heap for 900,000 entries).
   */
  private hold(state: PartitionState, releaseAt: number, pause: () => unknown, generation: number): void {
    pause();
    if (state.resumeTimer) clearTimeout(state.resumeTimer);
    state.heldUntil = releaseAt;
    const { topic, partition } = state;
    state.resumeTimer = setTimeout(
      () => {
        state.resumeTimer = undefined;
        state.heldUntil = undefined;
        if (generation !== this.generation || !this.active) return;
        try {
          this.opts.consumer.resume([{ topic, partitions: [partition] }]);
        } catch (err) {
          // kafkajs throws while it restarts the consumer after a crash (a broker killed): its
          // group is being rebuilt, and the new one starts with nothing paused, so there is
          // nothing to resume. Thrown from a timer, it would end the process.
          this.opts.logger.warn({ err, topic, partition }, 'resume skipped: the consumer is restarting');
        }
      },
      timerDelay(releaseAt, this.opts.clock.now()),
    );
  }

  private done(generation: number, topic: string, partition: number, offset: string): void {
    if (generation !== this.generation) return; // re-read from the committed offset anyway
    const state = this.partitions.get(`${topic}:${partition}`);
    if (state === undefined) return;
    state.tracker.markDone(offset);
    state.dirty = true;
    this.resumeIfDrained(state);
  }

  /**
   * The memory cap: unfinished entries (which hold memory in the sink) per partition, and, ten
   * times larger, offsets awaiting commit behind an unfinished head (which hold only a number).
   */
  private overCap(state: PartitionState): boolean {
    const cap = this.opts.maxInMemoryPerPartition;
    return state.tracker.inFlight >= cap || state.tracker.tracked >= cap * 10;
  }

  /** Due lag past the cap: the ends of partitions that stopped reading there, from the admin API. */
  private async refreshCappedEnds(): Promise<void> {
    const capped = [...this.partitions.values()].filter((p) => p.waitingForDrain);
    for (const topic of new Set(capped.map((p) => p.topic))) {
      try {
        const ends = await this.opts.fetchEnds!(topic);
        for (const end of ends) {
          const state = this.partitions.get(`${topic}:${end.partition}`);
          if (state?.waitingForDrain) state.highWatermark = Math.max(state.highWatermark, Number(end.high));
        }
      } catch (err) {
        // A metric's input: the next tick tries again.
        this.opts.logger.debug({ err, topic }, 'could not read partition ends for due lag');
      }
    }
  }

  private resumeIfDrained(state: PartitionState): void {
    const cap = this.opts.maxInMemoryPerPartition;
    if (state.waitingForDrain && state.tracker.inFlight <= cap / 2 && state.tracker.tracked < cap * 5) {
      state.waitingForDrain = false;
      this.opts.consumer.resume([{ topic: state.topic, partitions: [state.partition] }]);
    }
  }

  /**
   * Whether this member still owns what it is reading. Made here, not in onBatch: a closure
   * there would put kafkajs's callbacks (which hold the whole fetch) into the scope that every
   * entry's done() keeps alive.
   */
  private ownedCheck(isRunning: () => boolean, generation: number): () => boolean {
    return () => isRunning() && generation === this.generation && this.active;
  }

  /**
   * The record as held, or dead-lettered when it cannot be used. The dead-letter write is retried
   * (the broker or the producer's breaker away): the partition waits on it, heartbeating, rather
   * than skipping the record or crashing the consumer; given up only when this member stops
   * owning the partition, the record unresolved. A write the broker refuses for the record
   * itself fails after the policy's tries and reaches kafkajs: the stage turns FAILED, loudly.
   */
  private async read(
    topic: string,
    partition: number,
    message: KafkaMessage,
    now: number,
    owned: () => boolean,
    heartbeat: () => Promise<void>,
  ): Promise<HeldMessage | 'dead-lettered' | 'abandoned'> {
    let error: unknown;
    try {
      return this.opts.read({ topic, partition, offset: message.offset, key: message.key, value: message.value, headers: message.headers }, now);
    } catch (err) {
      error = err;
    }
    try {
      const retried = { policy: this.opts.dlqRetry ?? RetryPolicies.append, what: 'dead-lettering a record', logger: this.opts.logger, keepGoing: owned };
      await retryHeartbeating(() => this.opts.dlq.send({ topic, partition, message, error }), heartbeat, retried);
    } catch (err) {
      if (!owned()) return 'abandoned';
      throw err;
    }
    return 'dead-lettered';
  }

  /** Commits each partition's finished prefix; a failed commit is retried on the next tick. */
  private commitDirty(): Promise<void> {
    this.commitInFlight = this.commitInFlight.then(async () => {
      const offsets: Array<{ topic: string; partition: number; offset: string }> = [];
      const states: PartitionState[] = [];
      for (const state of this.partitions.values()) {
        if (!state.dirty) continue;
        state.dirty = false;
        const next = state.tracker.advance() ?? state.unacked;
        this.resumeIfDrained(state);
        if (next === undefined) continue;
        state.unacked = next;
        states.push(state);
        offsets.push({ topic: state.topic, partition: state.partition, offset: next });
      }
      if (offsets.length === 0) return;
      try {
        await this.opts.consumer.commitOffsets(offsets);
        for (const state of states) state.unacked = undefined;
      } catch (err) {
        // Retried on the next tick; after a rebalance the new owner re-reads from the last commit.
        for (const state of states) state.dirty = true;
        this.opts.logger.warn({ err, offsets: offsets.length }, 'offset commit failed; will be retried');
      }
    });
    return this.commitInFlight;
  }
}
