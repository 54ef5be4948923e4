/**
 * The lifecycle every long-running part reports, and the one shape they all have (Component),
 * all the way up: the polling loops of runtime/poll-loop.ts (the outbox retention's, the database
 * watch's, the scanner's, the capture probe's writes, the forecast), the consumer stages of
 * runtime/consumer-base.ts (hold consumers, the repartitioner), the capture probe's reader, the
 * control switches, and the groups of runtime/group.ts that compose them into roles and the
 * process.
 *
 *   NEW → RUNNING → STOPPING → STOPPED
 *           └────→ FAILED      it can no longer do its work (e.g. its Kafka consumer crashed and
 *                              will not restart); the process reports unhealthy and exits non-zero
 */
export type Lifecycle = 'NEW' | 'RUNNING' | 'STOPPING' | 'STOPPED' | 'FAILED';

/** Healthy, or the reason it is not (/healthz lists every reason). */
export type Health = Readonly<{ ok: true } | { ok: false; reason: string }>;

/**
 * A long-running part. start() runs it (a second start does nothing); stop() is idempotent (a
 * second call awaits the first one's work) and bounded by a deadline of the part's own; ready()
 * resolves once it does its work (a consumer has joined its group; at once for most parts), what
 * /readyz waits for; health() is what /healthz reports of it; failed() resolves (never rejects)
 * once the part is FAILED, and never for a part that cannot fail for good (its errors are
 * retried). Parts compose with runtime/group.ts.
 */
export interface Component {
  readonly lifecycle: Lifecycle;
  start(): Promise<void>;
  stop(): Promise<void>;
  ready(): Promise<void>;
  health(): Health;
  failed(): Promise<Error>;
}

/** failed() of a part that retries every error and so never fails for good. */
export const NEVER_FAILS: Promise<Error> = new Promise<Error>(() => undefined);

/**
 * Whether `work` settled within `deadlineMs` (true) or was left running (false). A stop that
 * waits on a broker or a server that no longer answers would otherwise never return; what is
 * abandoned is safe by construction (unfinished entries are re-read from the committed offsets).
 * A rejection counts as settled: the caller awaits `work` itself if it wants the error.
 */
export async function settlesWithin(work: Promise<unknown>, deadlineMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
