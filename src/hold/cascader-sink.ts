/**
 * The cascader's side of holding: a coarse bucket is released `lead` before it starts, and each
 * of its entries is routed again at the cascader's clock. The router picks the finest tier whose
 * horizon covers the entry (tier sizes guarantee the finer tier can take the whole bucket);
 * entries still beyond every horizon go back to the coarsest ring; overdue ones go to the due
 * lane. An entry is done only once its new record is acknowledged, so a crash re-routes it again
 * (duplicates are harmless: the expirer is idempotent). Appends are bounded in time
 * (kafka/send-routed.ts), so a slow send cannot land an entry a lap late (I1).
 */
import type { HeldMessage, HoldSink } from './hold-consumer';
import { appendBudgetMs, sendRouted, SendRoutedOptions } from '../kafka/send-routed';
import { Backoff, backoffMs, Backoffs } from '../runtime/retry-policy';

type Pending = { msg: HeldMessage; done: () => void };

/** The sends' own options (the producer, the topology, the catalogue that encodes the entries, the clock, the logger), the append budget the topology's. */
export type CascaderSinkOptions = Omit<SendRoutedOptions, 'appendBudgetMs'> &
  Readonly<{
    flushIntervalMs: number;
    maxBatchSize: number;
    onCascaded?: (count: number) => void;
    /** Between failed sends (the one retry policy's jittered backoff). Default 100 ms doubling to 5 s. */
    backoff?: Backoff;
    /** For the backoff's jitter; tests make it exact. */
    random?: () => number;
  }>;

export class CascaderSink implements HoldSink {
  private buffer: Pending[] = [];
  private timer?: NodeJS.Timeout;
  private flushing = false;
  private epoch = 0;
  private failures = 0;
  private inFlight = 0;
  private readonly routing: SendRoutedOptions;

  constructor(private readonly opts: CascaderSinkOptions) {
    this.routing = {
      producer: opts.producer,
      topology: opts.topology,
      catalogue: opts.catalogue,
      clock: opts.clock,
      appendBudgetMs: appendBudgetMs(opts.topology),
      logger: opts.logger,
    };
  }

  take(msg: HeldMessage, done: () => void): void {
    this.buffer.push({ msg, done });
    if (this.buffer.length >= this.opts.maxBatchSize) void this.flush();
    else this.arm(this.opts.flushIntervalMs);
  }

  reset(): void {
    this.epoch += 1;
    this.buffer = [];
  }

  /** Everything a cascader takes is released, so all of it is due. */
  dueCount(): number {
    return this.buffer.length + this.inFlight;
  }

  close(): void {
    this.reset();
    if (this.timer) clearTimeout(this.timer);
  }

  private arm(delayMs: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.buffer.length === 0) return;
    this.flushing = true;
    const epoch = this.epoch;
    const batch = this.buffer.splice(0, this.opts.maxBatchSize);
    this.inFlight = batch.length;
    try {
      await sendRouted(
        this.routing,
        batch.map((p) => p.msg.entry),
      );
      this.failures = 0;
      for (const p of batch) p.done();
      this.opts.onCascaded?.(batch.length);
    } catch (err) {
      this.failures += 1;
      this.opts.logger.warn({ err, size: batch.length }, 'cascade produce failed; will retry');
      if (epoch === this.epoch) this.buffer.unshift(...batch);
    } finally {
      this.inFlight = 0;
      this.flushing = false;
      if (this.buffer.length > 0) this.arm(this.failures > 0 ? backoffMs(this.failures, this.opts.backoff ?? Backoffs.cascade, this.opts.random) : 0);
    }
  }
}
