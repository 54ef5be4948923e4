/**
 * What a failed expiry batch means, for the expirer sink (hold/expirer-sink.ts, whose header lists
 * the cases): waited out and retried as a batch (retriable, or a schema cut-over's moment), moved
 * to its database's waiting lane (the database away), split into entries tried alone (a
 * deterministic failure of a batch), or an entry parked after failing alone `maxAttempts` times.
 * Waiting never counts towards parking (Pending.waits vs failuresAlone).
 */
import type { Transition } from '../core/entity-catalogue';
import type { Clock } from '../core/clock';
import type { Logger } from '../ops/logger';
import { type Backoff, backoffMs, classifyFailure, isDatabaseAway, isSchemaInFlux } from '../runtime/retry-policy';
import type { Pending } from './expirer-lanes';
import type { HeldMessage } from './hold-consumer';
import { moveToWaiting, type WaitingLanes, type WaitingLog } from './waiting-lanes';

/** What the failure handling needs of the sink: its options, its epoch (a rebalance moves it), its waiting log and requeue. */
export type FailureContext = Readonly<{
  opts: Readonly<{
    clock: Clock;
    backoff: Backoff;
    random?: () => number;
    maxAttempts: number;
    cutOverGraceMs: number;
    park: (msg: HeldMessage, err: unknown) => Promise<void>;
    logger: Logger;
    observer?: Partial<{ parked(entity: string, err: unknown): void }>;
    waiting?: WaitingLanes;
  }>;
  epoch: () => number;
  waitingLog: WaitingLog;
  requeue: (at: number, p: Pending) => void;
}>;

/**
 * A missing table or unknown column is waited out as a whole batch for cutOverGraceMs from the
 * batch's first such failure (a cut-over's moment); after that it is believed and handled as
 * any deterministic failure.
 */
function ridingOutSchemaChange(ctx: FailureContext, batch: Pending[], err: unknown, now: number): boolean {
  if (!isSchemaInFlux(err)) return false;
  let since = now;
  for (const p of batch) since = Math.min(since, (p.inFluxSince ??= now));
  return now - since < ctx.opts.cutOverGraceMs;
}

/** A failed batch: retried, moved to its database's waiting lane, split into entries tried alone, or an entry parked (the sink's header). */
export async function retryOrPark(ctx: FailureContext, transition: Transition, batch: Pending[], err: unknown): Promise<void> {
  const entity = transition.entity;
  const ref = transition.ref;
  const now = ctx.opts.clock.now();
  if (isDatabaseAway(err) && ctx.opts.waiting !== undefined) {
    const epoch = ctx.epoch();
    batch = await moveToWaiting(ctx.opts.waiting, entity, batch, err, ctx.waitingLog);
    // A rebalance while the append ran: what is left is re-read from the committed offsets.
    if (batch.length === 0 || epoch !== ctx.epoch()) return;
  }
  if (classifyFailure(err) === 'retriable' || ridingOutSchemaChange(ctx, batch, err, now)) {
    // One wait for the whole batch, so it is retried as a batch: per-entry jitter would
    // scatter it into a crowd of tiny transactions against a database that is struggling.
    // Waiting counts only towards the backoff, never towards parking (failuresAlone).
    const waits = Math.max(...batch.map((p) => (p.waits += 1)));
    const at = now + backoffMs(waits, ctx.opts.backoff, ctx.opts.random);
    // An open breaker was logged once when it opened; each call it turns away is not news.
    const breakerOpen = (err as { code?: unknown } | null)?.code === 'EOPENBREAKER';
    ctx.opts.logger[breakerOpen ? 'debug' : 'warn'](
      { err, entity, transition: ref, table: batch[0]!.location.key, size: batch.length, waits },
      isSchemaInFlux(err) ? 'expiry batch failed on a missing table or column (a schema change cut-over?); will retry' : 'expiry batch failed; will retry',
    );
    for (const p of batch) ctx.requeue(at, p);
    return;
  }
  if (batch.length > 1 || !batch[0]!.alone) {
    // Which entry the failure belongs to is unknown: each is tried again on its own.
    ctx.opts.logger.warn({ err, entity, transition: ref, size: batch.length }, 'expiry batch failed deterministically; its entries are tried again one by one');
    for (const p of batch) {
      p.alone = true;
      ctx.requeue(now, p);
    }
    return;
  }
  const p = batch[0]!;
  p.failuresAlone += 1;
  if (p.failuresAlone < ctx.opts.maxAttempts) {
    ctx.requeue(now + backoffMs(p.failuresAlone, ctx.opts.backoff, ctx.opts.random), p);
    return;
  }
  try {
    await ctx.opts.park(p.msg, err);
    ctx.opts.observer?.parked?.(entity, err);
    ctx.opts.logger.error(
      { err, entity, transition: ref, id: p.msg.entry.id, topic: p.msg.topic, partition: p.msg.partition, offset: p.msg.offset },
      'entry parked in the DLQ after failing alone; redrive it once the cause is fixed',
    );
    p.done();
  } catch (parkErr) {
    ctx.opts.logger.warn({ err: parkErr, id: p.msg.entry.id }, 'parking failed; the entry stays and is tried again');
    ctx.requeue(now + backoffMs(p.failuresAlone, ctx.opts.backoff, ctx.opts.random), p);
  }
}
