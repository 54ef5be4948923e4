/**
 * A consumer over ring (or due-lane) topics that holds each partition until its head is due:
 *
 *   head not yet released → pause the partition, seek back to that message, resume by timer
 *   head released         → hand it to the sink (which fires it, or re-routes it) and read on
 *   sink finished         → commit only the contiguous finished prefix (OffsetTracker)
 *   memory cap reached    → pause, seek back, resume once the partition drains below half
 *
 * Holding is recomputed, never remembered: after every rebalance (GROUP_JOIN) all in-memory
 * state and timers are dropped, every assigned partition is resumed, and consumption restarts
 * from the committed offsets; the first undue head pauses it again. Client pause state is never
 * trusted across rebalances or restarts. Nothing sleeps inside the handler (heartbeats come
 * from the consume loop). Invariant I1 (bucket times never decrease within a ring partition)
 * is what makes "the head is not due, so nothing behind it is" true.
 *
 * Lifecycle: NEW → RUNNING → STOPPING → STOPPED.
 */
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { Clock, timerDelay } from '../core/clock';
import { decodeBucketEntry, BucketEntry } from '../core/bucket-entry';
import { OffsetTracker } from './offset-tracker';
import type { DlqWriter } from '../kafka/dlq-writer';
import { groupJoined } from '../kafka/group-joined';
import type { Logger } from '../ops/logger';

export type HeldMessage = Readonly<{
  topic: string;
  partition: number;
  offset: string;
  shard: number;
  bucketStartMs: number;
  entry: BucketEntry;
}>;

/** When a message may be released (its bucket's start, minus a tier's lead; 0 for the due lane). */
export type ReleasePolicy = (msg: HeldMessage) => number;

export interface HoldSink {
  /** Takes a released message and calls done() once it is finished. */
  take(msg: HeldMessage, done: () => void): void;
  /** Forgets everything not yet finished (the partitions are re-read after a rebalance). */
  reset(): void;
  /** Entries taken whose time has come but are not finished (for the due-lag metric). */
  dueCount(now: number): number;
}

export type HoldStats = Readonly<{ heldPartitions: number; inMemory: number; largestPartitionInMemory: number; dueLag: number }>;

export type HoldConsumerOptions = Readonly<{
  consumer: Consumer;
  topics: readonly string[];
  releaseAt: ReleasePolicy;
  sink: HoldSink;
  dlq: DlqWriter;
  clock: Clock;
  maxInMemoryPerPartition: number;
  commitIntervalMs: number;
  logger: Logger;
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
};

export type HoldConsumerState = 'NEW' | 'RUNNING' | 'STOPPING' | 'STOPPED';

export class HoldConsumer {
  private state: HoldConsumerState = 'NEW';
  private generation = 0;
  private partitions = new Map<string, PartitionState>();
  private commitTimer?: NodeJS.Timeout;
  private commitInFlight: Promise<void> = Promise.resolve();
  private joinedGroup: Promise<void> = new Promise(() => undefined);

  constructor(private readonly opts: HoldConsumerOptions) {
    if (opts.maxInMemoryPerPartition < 1) throw new RangeError('maxInMemoryPerPartition must be >= 1');
  }

  get lifecycle(): HoldConsumerState {
    return this.state;
  }

  /** Resolves once the consumer has joined its group. */
  joined(): Promise<void> {
    return this.joinedGroup;
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
    let unreadReleased = 0;
    for (const p of this.partitions.values()) {
      inMemory += p.tracker.inFlight;
      largestPartitionInMemory = Math.max(largestPartitionInMemory, p.tracker.inFlight);
      if (p.heldUntil !== undefined) heldPartitions += 1;
      else unreadReleased += Math.max(0, p.highWatermark - p.nextOffset);
    }
    return { heldPartitions, inMemory, largestPartitionInMemory, dueLag: unreadReleased + this.opts.sink.dueCount(this.opts.clock.now()) };
  }

  async start(): Promise<void> {
    if (this.state !== 'NEW') return;
    this.state = 'RUNNING';
    const { consumer } = this.opts;
    consumer.on(consumer.events.GROUP_JOIN, (e) => this.onGroupJoin(e.payload.memberAssignment));
    this.joinedGroup = groupJoined(consumer);
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [...this.opts.topics], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 4,
        eachBatch: (payload) => this.onBatch(payload),
      });
    } catch (err) {
      // A half-started consumer would keep its connections (and the process) alive.
      this.state = 'STOPPED';
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
    this.commitTimer = setInterval(() => void this.commitDirty(), this.opts.commitIntervalMs);
  }

  async stop(): Promise<void> {
    if (this.state === 'STOPPED' || this.state === 'STOPPING') return;
    this.state = 'STOPPING';
    if (this.commitTimer) clearInterval(this.commitTimer);
    for (const p of this.partitions.values()) if (p.resumeTimer) clearTimeout(p.resumeTimer);
    try {
      await this.commitDirty();
    } finally {
      await this.opts.consumer.disconnect().catch((err: unknown) => this.opts.logger.warn({ err }, 'consumer disconnect failed'));
      this.opts.sink.reset();
      this.state = 'STOPPED';
    }
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    this.generation += 1;
    for (const p of this.partitions.values()) if (p.resumeTimer) clearTimeout(p.resumeTimer);
    this.partitions.clear();
    this.opts.sink.reset();
    const topics = Object.entries(assignment).map(([topic, partitions]) => ({ topic, partitions }));
    if (topics.length > 0) this.opts.consumer.resume(topics);
    this.opts.logger.info({ generation: this.generation, assignment }, 'assignment changed: holding recomputed from committed offsets');
  }

  private partition(topic: string, partition: number): PartitionState {
    const key = `${topic}:${partition}`;
    let p = this.partitions.get(key);
    if (p === undefined) {
      p = { topic, partition, tracker: new OffsetTracker(), waitingForDrain: false, dirty: false, highWatermark: 0, nextOffset: 0 };
      this.partitions.set(key, p);
    }
    return p;
  }

  private async onBatch({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    const generation = this.generation;
    const state = this.partition(topic, partition);
    const now = this.opts.clock.now();
    state.highWatermark = Number(batch.highWatermark);
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || generation !== this.generation) return;
      if (this.overCap(state)) {
        // Bounded memory: stop reading until the partition drains (see resumeIfDrained).
        pause();
        this.opts.consumer.seek({ topic, partition, offset: message.offset });
        state.waitingForDrain = true;
        return;
      }
      const held = await this.decode(topic, partition, message);
      if (held === undefined) {
        // Sent to the DLQ: finished, the partition moves on (invariant I5).
        state.tracker.add(message.offset);
        state.tracker.markDone(message.offset);
        state.dirty = true;
        state.nextOffset = Number(message.offset) + 1;
        resolveOffset(message.offset);
        continue;
      }
      const releaseAt = this.opts.releaseAt(held);
      if (releaseAt > now) {
        this.hold(state, topic, partition, message.offset, releaseAt, pause, generation);
        return;
      }
      state.tracker.add(message.offset);
      state.nextOffset = Number(message.offset) + 1;
      resolveOffset(message.offset);
      this.opts.sink.take(held, () => this.done(generation, topic, partition, message.offset));
    }
    await heartbeat();
  }

  private hold(state: PartitionState, topic: string, partition: number, offset: string, releaseAt: number, pause: () => () => void, generation: number): void {
    const resume = pause();
    this.opts.consumer.seek({ topic, partition, offset });
    if (state.resumeTimer) clearTimeout(state.resumeTimer);
    state.heldUntil = releaseAt;
    state.resumeTimer = setTimeout(() => {
      state.resumeTimer = undefined;
      state.heldUntil = undefined;
      if (generation === this.generation && this.state === 'RUNNING') resume();
    }, timerDelay(releaseAt, this.opts.clock.now()));
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

  private resumeIfDrained(state: PartitionState): void {
    const cap = this.opts.maxInMemoryPerPartition;
    if (state.waitingForDrain && state.tracker.inFlight <= cap / 2 && state.tracker.tracked < cap * 5) {
      state.waitingForDrain = false;
      this.opts.consumer.resume([{ topic: state.topic, partitions: [state.partition] }]);
    }
  }

  private async decode(topic: string, partition: number, message: KafkaMessage): Promise<HeldMessage | undefined> {
    try {
      const entry = decodeBucketEntry(message.value);
      const shard = Number(message.key?.toString());
      const bucketStartMs = Number(message.headers?.['bucket_start']?.toString() ?? Number.NaN);
      if (!Number.isSafeInteger(shard) || shard < 0) throw new Error(`bad shard key ${String(message.key)}`);
      return { topic, partition, offset: message.offset, shard, bucketStartMs: Number.isFinite(bucketStartMs) ? bucketStartMs : entry.expireAtMs, entry };
    } catch (err) {
      await this.opts.dlq.send({ topic, partition, message, error: err });
      return undefined;
    }
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
