/**
 * Error codes as data, one base class. Callers branch on `code` and `retriable`, never on
 * message text. `retriable` tells the one retry helper whether trying again can help: a
 * programmer or configuration error never becomes right by waiting.
 */
export const ErrorCodes = [
  'CONFIG_INVALID',
  'CDC_UNDECODABLE',
  'CDC_INVALID',
  'BUCKET_INVALID',
  'CONSUMER_CRASHED',
  'EXPIRY_PARKED',
  'INTERRUPTED',
  'KAFKA_UNAVAILABLE',
  'REGISTRY_UNAVAILABLE',
  'CONNECT_UNAVAILABLE',
  'MIGRATION_LOCKED',
  'MIGRATION_REFUSED',
  'SCHEMA_ID_MISSING',
  'EVENT_REJECTED',
  'EVENT_TOO_LARGE',
  'STATEMENT_DEADLINE',
  'DATABASE_UNCHECKED',
  'GUARD_MISMATCH',
  'EVENT_NOT_WRITTEN',
] as const;
export type ErrorCode = (typeof ErrorCodes)[number];

export class TimebucketError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, opts: { retriable?: boolean; cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = opts.retriable ?? false;
    this.details = Object.freeze({ ...(opts.details ?? {}) });
  }
}

export class ConfigError extends TimebucketError {
  constructor(message: string, details: { problems: string[] }) {
    super('CONFIG_INVALID', message, { retriable: false, details });
  }
}

/**
 * A record that decoded but cannot be used: a field is missing, of the wrong type or out of
 * range. Waiting never fixes data, so it is not retriable; the caller sends it to the DLQ (I5).
 */
export class CdcInvalidError extends TimebucketError {
  constructor(reason: string, details?: Record<string, unknown>) {
    super('CDC_INVALID', reason, { retriable: false, details });
  }
}

/**
 * A bucket record (ring or due lane) that decoded but breaks the rules its lane promises: a
 * bucket_start that is not this topic's bucket, an entry outside its bucket, a shard in the wrong
 * partition, a time further ahead than any writer's clock can be. Holding on it would freeze the
 * partition's commit point, so it goes to the DLQ instead (I5).
 */
export class BucketRecordInvalidError extends TimebucketError {
  constructor(reason: string, details?: Record<string, unknown>) {
    super('BUCKET_INVALID', reason, { retriable: false, details });
  }
}

/** A kafkajs consumer crashed and kafkajs will not restart it: the process must not look healthy. */
export class ConsumerCrashedError extends TimebucketError {
  constructor(group: string, cause: unknown) {
    super('CONSUMER_CRASHED', `consumer of group ${group} crashed and will not restart`, { retriable: false, cause, details: { group } });
  }
}

/** An entry whose expiry failed deterministically, alone, every time: parked in the DLQ. */
export class ExpiryParkedError extends TimebucketError {
  constructor(attempts: number, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super('EXPIRY_PARKED', `expiry failed ${attempts} times on its own: ${why}`, { retriable: false, cause });
  }
}

/** An operator's command stopped on request (Ctrl-C, SIGTERM) before it finished; it cleaned up. */
export class InterruptedError extends TimebucketError {
  /** `hint`: what the operator does next (printed by cli/interrupt.ts). */
  constructor(
    what: string,
    readonly hint?: string,
  ) {
    super('INTERRUPTED', `${what} interrupted`, { retriable: false });
  }
}

/** The brokers did not do in time what a command waits for (a group join, topic leaders): worth another try. */
export class KafkaUnavailableError extends TimebucketError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('KAFKA_UNAVAILABLE', message, { retriable: true, details });
  }
}

/**
 * Another process holds the migrations lock (db/migrate-latest.ts): a migration that is still
 * running, or, when it stays taken for all of `migrate`'s wait, a lock whose process was killed
 * mid-way.
 */
export class MigrationLockedError extends TimebucketError {
  constructor(waitedMs: number, cause: unknown) {
    super(
      'MIGRATION_LOCKED',
      `the migrations lock is taken (waited up to ${Math.round(waitedMs / 1000)} s): another migrate is running, or one was killed while it held the lock ` +
        '(then, once sure none runs: UPDATE knex_migrations_lock SET is_locked = 0)',
      // Retriable: the holder finishes in time; `migrate` waits for it (runtime/retry.ts), up to its bound.
      { retriable: true, cause, details: { waitedMs } },
    );
  }
}
