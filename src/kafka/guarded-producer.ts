/**
 * The producer the stages share, made safe to keep using after a failed send.
 *
 * kafkajs's idempotent producer numbers each partition's batches. When a send gives up, it
 * rolls its sequence back even if the broker did append the batch; the next send to that
 * partition then fails with OUT_OF_ORDER_SEQUENCE_NUMBER for ever (the cascader and the
 * repartitioner stall) or is dropped by the broker as a duplicate (a lost ring entry).
 * So a producer that failed a send is never used again: it is disconnected, and the next send
 * gets a fresh one (a new producer id, so fresh sequences). The failed send is the caller's to
 * retry, as before; a duplicate it may cause downstream is harmless (I4, the guarded update).
 *
 * A send kafkajs resolves without an acknowledgement for every partition it wrote to is such a
 * failed send (kafka/acknowledged.ts): kafkajs can skip messages whose partition moved to
 * another broker during its own retries.
 *
 * Sends go through a circuit breaker (runtime/breaker.ts): with the broker down they fail fast
 * instead of each waiting out kafkajs's retries, and the stages' own retries back off.
 */
import type { Producer, ProducerBatch, ProducerRecord, RecordMetadata } from 'kafkajs';
import { createBreaker, BreakerState } from '../runtime/breaker';
import { assertAcknowledged } from './acknowledged';
import type { Logger } from '../ops/logger';

export type GuardedProducer = Readonly<{
  send: (record: ProducerRecord) => Promise<RecordMetadata[]>;
  sendBatch: (batch: ProducerBatch) => Promise<RecordMetadata[]>;
  /** Connects the first producer, so that start-up fails when the broker cannot be reached. */
  connect: () => Promise<void>;
  disconnect: () => Promise<void>;
  breakerState: () => BreakerState;
  /** Producers created so far (the first one included): a number that grows means failed sends. */
  generations: () => number;
}>;

function acknowledged(sent: ProducerRecord | ProducerBatch, answer: RecordMetadata[]): RecordMetadata[] {
  assertAcknowledged(sent, answer);
  return answer;
}

export function createGuardedProducer(
  make: () => Producer,
  opts: {
    breaker?: string;
    logger: Logger;
    onBreakerStateChange?: (name: string, state: BreakerState) => void;
    onReplaced?: () => void;
    resetTimeoutMs?: number;
  },
): GuardedProducer {
  let current: Promise<Producer> | undefined;
  let created = 0;
  let closed = false;

  const obtain = (): Promise<Producer> => {
    if (closed) return Promise.reject(new Error('producer is disconnected'));
    if (current === undefined) {
      const producer = make();
      created += 1;
      const connecting = producer.connect().then(() => producer);
      // A producer that could not connect is replaced on the next call, like one that failed a send.
      current = connecting;
      connecting.catch(() => {
        if (current === connecting) current = undefined;
        void producer.disconnect().catch(() => undefined);
      });
    }
    return current;
  };

  const retire = (failed: Promise<Producer>, err: unknown): void => {
    if (current !== failed) return; // already replaced by a concurrent failure
    current = undefined;
    opts.logger.warn({ err }, 'send failed: the producer is replaced (its sequence numbers can no longer be trusted)');
    opts.onReplaced?.();
    void failed.then((p) => p.disconnect()).catch(() => undefined);
  };

  const breaker = createBreaker(
    async <R>(call: (p: Producer) => Promise<R>): Promise<R> => {
      const producing = obtain();
      const producer = await producing;
      try {
        return await call(producer);
      } catch (err) {
        retire(producing, err);
        throw err;
      }
    },
    { name: opts.breaker ?? 'producer', logger: opts.logger, onStateChange: opts.onBreakerStateChange, resetTimeoutMs: opts.resetTimeoutMs },
  );

  return {
    // A send kafkajs resolved without writing some of it counts as failed: the producer goes
    // like after any failed send, and the caller sends again (kafka/acknowledged.ts).
    send: (record) => breaker.fire(async (p) => acknowledged(record, await p.send(record))) as Promise<RecordMetadata[]>,
    sendBatch: (batch) => breaker.fire(async (p) => acknowledged(batch, await p.sendBatch(batch))) as Promise<RecordMetadata[]>,
    connect: async () => void (await obtain()),
    async disconnect() {
      closed = true;
      breaker.shutdown();
      const last = current;
      current = undefined;
      if (last) await last.then((p) => p.disconnect()).catch(() => undefined);
    },
    breakerState: () => breaker.state(),
    generations: () => created,
  };
}
