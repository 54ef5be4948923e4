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
  const slot = new ProducerSlot(make, opts.logger, opts.onReplaced);
  const breaker = createBreaker(
    async <R>(call: (p: Producer) => Promise<R>): Promise<R> => {
      const producing = slot.obtain();
      const producer = await producing;
      try {
        return await call(producer);
      } catch (err) {
        slot.retire(producing, err);
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
    connect: async () => void (await slot.obtain()),
    async disconnect() {
      breaker.shutdown();
      await slot.close();
    },
    breakerState: () => breaker.state(),
    generations: () => slot.created,
  };
}

/** The producer in use: made and connected on first use, replaced after a failed send, none once closed. */
class ProducerSlot {
  private current: Promise<Producer> | undefined;
  private closed = false;
  /** Producers made so far. */
  created = 0;

  constructor(
    private readonly make: () => Producer,
    private readonly logger: Logger,
    private readonly onReplaced?: () => void,
  ) {}

  obtain(): Promise<Producer> {
    if (this.closed) return Promise.reject(new Error('producer is disconnected'));
    if (this.current === undefined) {
      const producer = this.make();
      this.created += 1;
      const connecting = producer.connect().then(() => producer);
      // A producer that could not connect is replaced on the next call, like one that failed a send.
      this.current = connecting;
      connecting.catch(() => {
        if (this.current === connecting) this.current = undefined;
        void producer.disconnect().catch(() => undefined);
      });
    }
    return this.current;
  }

  retire(failed: Promise<Producer>, err: unknown): void {
    if (this.current !== failed) return; // already replaced by a concurrent failure
    this.current = undefined;
    this.logger.warn({ err }, 'send failed: the producer is replaced (its sequence numbers can no longer be trusted)');
    this.onReplaced?.();
    void failed.then((p) => p.disconnect()).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const last = this.current;
    this.current = undefined;
    if (last) await last.then((p) => p.disconnect()).catch(() => undefined);
  }
}
