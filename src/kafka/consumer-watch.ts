/**
 * Watches a kafkajs consumer so that a dead one cannot hide behind a live process.
 *
 *   progress  the consume loop emits FETCH_START on every turn, paused partitions or not (an
 *             idle fetch still waits maxWaitTime and comes back), plus GROUP_JOIN and HEARTBEAT;
 *             a loop that emits none of them for `stallMs` is stuck (crash-looping on restarts,
 *             wedged in a handler) and the member is reported unhealthy; still stuck after
 *             twice that, it counts as crashed (an orchestrator without a liveness probe, or a
 *             plain `timebucket run`, would otherwise keep a member that consumes nothing)
 *   crash     kafkajs restarts a crashed consumer only for retriable errors; CRASH with
 *             restart = false means this consumer is gone for good: `failed` resolves with
 *             the reason, and the owner turns FAILED (the process exits non-zero)
 */
import type { Consumer } from 'kafkajs';
import type { Clock } from '../core/clock';
import { ConsumerCrashedError } from '../core/errors';
import type { Health } from '../runtime/lifecycle';

export type ConsumerWatch = Readonly<{
  health: () => Health;
  /** Resolves (never rejects) when the consumer crashed for good. */
  failed: Promise<ConsumerCrashedError>;
  stop: () => void;
}>;

export function watchConsumer(consumer: Consumer, opts: { group: string; clock: Clock; stallMs: number }): ConsumerWatch {
  let lastProgress = opts.clock.now();
  let crashed: ConsumerCrashedError | undefined;
  let signalFailed!: (err: ConsumerCrashedError) => void;
  const failed = new Promise<ConsumerCrashedError>((resolve) => (signalFailed = resolve));
  const fail = (cause: unknown) => {
    crashed ??= new ConsumerCrashedError(opts.group, cause);
    signalFailed(crashed);
  };
  const progress = () => {
    lastProgress = opts.clock.now();
  };
  const checker = setInterval(
    () => {
      const idle = opts.clock.now() - lastProgress;
      if (idle > 2 * opts.stallMs) fail(new Error(`no progress for ${idle} ms`));
    },
    Math.min(opts.stallMs, 1_000),
  );
  checker.unref();
  const removers = [
    consumer.on(consumer.events.FETCH_START, progress),
    consumer.on(consumer.events.GROUP_JOIN, progress),
    consumer.on(consumer.events.HEARTBEAT, progress),
    consumer.on(consumer.events.CRASH, (e) => {
      if (!e.payload.restart) fail(e.payload.error);
    }),
  ];
  return {
    health() {
      if (crashed !== undefined) return { ok: false, reason: crashed.message };
      const idle = opts.clock.now() - lastProgress;
      return idle > opts.stallMs ? { ok: false, reason: `consumer of group ${opts.group} made no progress for ${idle} ms` } : { ok: true };
    },
    failed,
    stop: () => {
      clearInterval(checker);
      removers.forEach((remove) => remove());
    },
  };
}
