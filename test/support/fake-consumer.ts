/**
 * A kafkajs Consumer stand-in that records what a stage does with it (pause, resume, commit,
 * seek, disconnect) and lets the test drive it: emit instrumentation events, feed batches to the
 * stage's eachBatch handler the way the real runner would, or one message to its eachMessage.
 */
import { EventEmitter } from 'node:events';
import type { Consumer, ConsumerRunConfig, EachBatchPayload, EachMessagePayload, KafkaMessage } from 'kafkajs';

export const consumerEvents = {
  FETCH_START: 'consumer.fetch_start',
  GROUP_JOIN: 'consumer.group_join',
  HEARTBEAT: 'consumer.heartbeat',
  CRASH: 'consumer.crash',
} as const;

export type FakeConsumer = {
  consumer: Consumer;
  paused: Set<string>;
  commits: Array<Array<{ topic: string; partition: number; offset: string }>>;
  seeks: unknown[];
  /** Arguments of every subscribe() call. */
  subscriptions: unknown[];
  /** Decides each commit's result; defaults to success. */
  commitResult: () => Promise<void>;
  emit: (event: string, payload: unknown) => void;
  joinGroup: (assignment: Record<string, number[]>) => void;
  /** Hands `messages` to eachBatch as one batch; returns what the runner saw. */
  feed: (topic: string, partition: number, messages: KafkaMessage[], highWatermark?: string) => Promise<{ resolved: string[]; heartbeats: number }>;
  /** Hands one message with these headers to eachMessage. */
  deliver: (headers: Record<string, string>) => Promise<void>;
  /** Whether the stage has called run(). */
  running: () => boolean;
  disconnected: boolean;
};

export function message(offset: number, o: Partial<KafkaMessage> = {}): KafkaMessage {
  return { key: null, value: null, timestamp: '0', attributes: 0, offset: String(offset), headers: {}, ...o } as KafkaMessage;
}

/** `connected`: what connect() waits for (a consumer kept from starting). */
export function fakeConsumer(connected: Promise<void> = Promise.resolve()): FakeConsumer {
  const emitter = new EventEmitter();
  let run: ConsumerRunConfig | undefined;
  const fake: FakeConsumer = {
    consumer: undefined as unknown as Consumer,
    paused: new Set(),
    commits: [],
    seeks: [],
    subscriptions: [],
    commitResult: () => Promise.resolve(),
    emit: (event, payload) => void emitter.emit(event, { payload }),
    joinGroup: (assignment) => fake.emit(consumerEvents.GROUP_JOIN, { memberAssignment: assignment }),
    disconnected: false,
    running: () => run !== undefined,
    async deliver(headers) {
      if (run?.eachMessage === undefined) throw new Error('the stage has not called run({ eachMessage })');
      const value = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)]));
      await run.eachMessage({
        topic: 't',
        partition: 0,
        message: message(0, { headers: value }),
        heartbeat: async () => undefined,
        pause: () => () => undefined,
      } as EachMessagePayload);
    },
    async feed(topic, partition, messages, highWatermark = String(messages.length === 0 ? 0 : Number(messages[messages.length - 1]!.offset) + 1)) {
      if (run?.eachBatch === undefined) throw new Error('the stage has not called run({ eachBatch })');
      const resolved: string[] = [];
      let heartbeats = 0;
      const key = `${topic}:${partition}`;
      const payload = {
        batch: { topic, partition, highWatermark, messages },
        resolveOffset: (o: string) => void resolved.push(o),
        heartbeat: async () => void (heartbeats += 1),
        pause: () => {
          fake.paused.add(key);
          return () => fake.paused.delete(key);
        },
        isRunning: () => true,
        isStale: () => false,
        commitOffsetsIfNecessary: async () => undefined,
        uncommittedOffsets: () => ({ topics: [] }),
      } as unknown as EachBatchPayload;
      await run.eachBatch(payload);
      return { resolved, heartbeats };
    },
  };
  fake.consumer = {
    events: consumerEvents,
    on: (event: string, listener: (e: unknown) => void) => {
      emitter.on(event, listener);
      return () => emitter.off(event, listener);
    },
    connect: () => connected,
    disconnect: async () => void (fake.disconnected = true),
    subscribe: async (s: unknown) => void fake.subscriptions.push(s),
    run: async (config: ConsumerRunConfig) => {
      run = config;
    },
    pause: (tps: Array<{ topic: string; partitions?: number[] }>) => tps.forEach((t) => t.partitions?.forEach((p) => fake.paused.add(`${t.topic}:${p}`))),
    resume: (tps: Array<{ topic: string; partitions?: number[] }>) => tps.forEach((t) => t.partitions?.forEach((p) => fake.paused.delete(`${t.topic}:${p}`))),
    seek: (s: unknown) => void fake.seeks.push(s),
    commitOffsets: async (offsets: Array<{ topic: string; partition: number; offset: string }>) => {
      await fake.commitResult();
      fake.commits.push(offsets);
    },
  } as unknown as Consumer;
  return fake;
}
