/**
 * The one retry policy: which failures waiting can fix, and how long to wait.
 *
 *   retriable       the database or broker is unreachable or busy, or a transaction lost a lock
 *                   race: deadlock (1213), lock wait timeout (1205), lost or refused
 *                   connections, server going away, a pool that could not hand out a
 *                   connection, access denied (database, table or column), a locked account or a read-only server (an operator's fix, the
 *                   same for every entry), a statement an operator killed, retriable Kafka
 *                   errors, an open circuit breaker.
 *                   Retried for as long as it lasts, with jittered backoff; nothing is ever
 *                   dropped for it.
 *   deterministic   everything else: a constraint the data breaks, a bug. Waiting never fixes
 *                   it, so the caller retries it only a few times (a misclassified blip gets a
 *                   second chance) and then parks the work with its reason, where an operator
 *                   can see and redrive it, instead of pinning a partition's commit point.
 *
 * Our own errors say what they are (`TimebucketError.retriable`); so do kafkajs's. Drivers' and
 * libraries' errors are recognised by their codes, never by message text. Pure.
 */
import { TimebucketError } from '../core/errors';

export type FailureKind = 'retriable' | 'deterministic';

/** MySQL/MariaDB server errors that a later attempt can get past. */
const RETRIABLE_ERRNOS: ReadonlySet<number> = new Set([
  1205, // ER_LOCK_WAIT_TIMEOUT
  1213, // ER_LOCK_DEADLOCK
  1040, // ER_CON_COUNT_ERROR: too many connections
  1053, // ER_SERVER_SHUTDOWN
  1927, // ER_CONNECTION_KILLED (MariaDB)
  2002, // CR_CONNECTION_ERROR
  2003, // CR_CONN_HOST_ERROR
  2006, // CR_SERVER_GONE_ERROR
  2013, // CR_SERVER_LOST
  4031, // ER_CLIENT_INTERACTION_TIMEOUT (MariaDB)
  // Access problems are the operator's to fix and hit every entry alike: parking entries one
  // by one for them would empty the stream into the DLQ during, say, a credential rotation.
  1044, // ER_DBACCESS_DENIED_ERROR
  1045, // ER_ACCESS_DENIED_ERROR
  1142, // ER_TABLEACCESS_DENIED_ERROR
  1143, // ER_COLUMNACCESS_DENIED_ERROR: a column grant revoked (the service's grants are per column)
  1290, // ER_OPTION_PREVENTS_STATEMENT (read-only replica after a failover)
  1792, // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  1836, // ER_READ_ONLY_MODE
  4151, // ER_ACCOUNT_HAS_BEEN_LOCKED (MariaDB)
  3118, // ER_ACCOUNT_HAS_BEEN_LOCKED (MySQL)
  // An operator's KILL QUERY of a statement (one stuck on a lock, say): the work is not wrong,
  // and the same statement runs when it is left alone.
  1317, // ER_QUERY_INTERRUPTED
]);

/** Node, mysql2, knex and opossum codes for "not now" rather than "never". */
const RETRIABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'EOPENBREAKER', // opossum: the breaker is open, the call was never made
  'ESEMLOCKED', // opossum: at capacity
]);

/**
 * Broker refusals of a producer's state, not of the records: kafkajs calls them non-retriable
 * because the same producer would be refused again, but the guarded producer
 * (kafka/guarded-producer.ts) replaces a producer that failed a send, and the new one (a new
 * producer id, fresh sequences) is accepted. Seen after a broker was killed mid-flow.
 */
const PRODUCER_STATE_TYPES: ReadonlySet<string> = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'DUPLICATE_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_ID_MAPPING',
]);

/**
 * A table missing (1146, ER_NO_SUCH_TABLE) or a column unknown (1054, ER_BAD_FIELD_ERROR): a
 * mapping mistake when it lasts, but for a moment also what an online schema change's cut-over
 * (gh-ost, pt-online-schema-change) looks like. Deterministic by classifyFailure; a caller that
 * can wait (the expirer sink) retries it as a whole for a grace period before it believes it.
 */
const SCHEMA_IN_FLUX_ERRNOS: ReadonlySet<number> = new Set([1146, 1054]);

export function isSchemaInFlux(err: unknown): boolean {
  const errno = typeof err === 'object' && err !== null ? (err as { errno?: unknown }).errno : undefined;
  return typeof errno === 'number' && SCHEMA_IN_FLUX_ERRNOS.has(errno);
}

/**
 * Failures that say the database as a whole is away, not that one statement lost a race: its
 * breaker open, a statement past its deadline, a connection refused or timed out, a database not
 * answered since start. The expirer moves due entries that meet one to their database's waiting
 * lane (hold/expirer-sink.ts); a lock wait or deadlock is a row's, and is waited out in place.
 */
const DATABASE_AWAY_CODES: ReadonlySet<string> = new Set([
  'EOPENBREAKER',
  'STATEMENT_DEADLINE',
  'DATABASE_UNCHECKED',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

export function isDatabaseAway(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && DATABASE_AWAY_CODES.has(code);
}

export function classifyFailure(err: unknown): FailureKind {
  if (err instanceof TimebucketError) return err.retriable ? 'retriable' : 'deterministic';
  if (typeof err !== 'object' || err === null) return 'deterministic';
  const e = err as { retriable?: unknown; errno?: unknown; code?: unknown; name?: unknown; fatal?: unknown; type?: unknown };
  if (e.retriable === true) return 'retriable'; // kafkajs
  if (typeof e.type === 'string' && PRODUCER_STATE_TYPES.has(e.type)) return 'retriable'; // kafkajs protocol errors
  if (typeof e.errno === 'number' && RETRIABLE_ERRNOS.has(e.errno)) return 'retriable';
  if (typeof e.code === 'string' && RETRIABLE_CODES.has(e.code)) return 'retriable';
  if (e.name === 'KnexTimeoutError' || e.name === 'KafkaJSNumberOfRetriesExceeded' || e.name === 'KafkaJSConnectionError') return 'retriable';
  // mysql2 marks errors that killed the connection as fatal: the next attempt gets a new one.
  if (e.fatal === true) return 'retriable';
  return 'deterministic';
}

export type Backoff = Readonly<{ baseMs: number; maxMs: number }>;

/**
 * How a piece of work is retried (runtime/retry.ts runs it): retriable failures for as long as they
 * last unless `retriableAttempts` bounds them (a command that must end), deterministic ones
 * `deterministicAttempts` times in all (1: never retried; a misclassified blip gets a second
 * chance with more), each wait jittered by `backoff`.
 */
export type RetryPolicy = Readonly<{ backoff: Backoff; deterministicAttempts: number; retriableAttempts?: number }>;

/**
 * The named backoffs of the loops that wait on their own (a sink's timer, a polling loop): one
 * place to read how hard each part retries.
 */
export const Backoffs = {
  /** Expiry batches, requeued as a batch (the expirer sink). */
  expiry: { baseMs: 100, maxMs: 5_000 },
  /** The cascader's failed appends. */
  cascade: { baseMs: 100, maxMs: 5_000 },
  /** Scanner pages. */
  scanner: { baseMs: 200, maxMs: 10_000 },
  /** Reading the saved schema ids again until every event type has one (its transitions wait). */
  registry: { baseMs: 500, maxMs: 10_000 },
  /** The outbox capture probe's reads. */
  captureProbe: { baseMs: 1_000, maxMs: 30_000 },
  /** Outbox retention's purge pages (its ceiling is configurable). */
  retention: { baseMs: 1_000, maxMs: 60_000 },
  /** The forecast's offset reads (hold/forecast-loop.ts). */
  forecast: { baseMs: 1_000, maxMs: 30_000 },
} as const satisfies Record<string, Backoff>;

/** The named policies. */
export const RetryPolicies = {
  /**
   * A stage's append to the bucket topics or the DLQ: for as long as the broker is away (a
   * stage that gives up leaves its partitions unread); a refusal of the records themselves
   * three times, then the failure reaches kafkajs and the stage turns FAILED, loudly.
   */
  append: { backoff: { baseMs: 100, maxMs: 5_000 }, deterministicAttempts: 3 },
  /** A replay's transactions and reads: an operator's command, so a long outage ends it (exit 1). */
  replay: { backoff: { baseMs: 100, maxMs: 5_000 }, deterministicAttempts: 1, retriableAttempts: 8 },
  /**
   * `topics apply` reading topics it just created: their leaders may not be known to every
   * broker yet, even after kafkajs's own retries, on a loaded cluster.
   */
  newTopics: { backoff: { baseMs: 1_000, maxMs: 8_000 }, deterministicAttempts: 1, retriableAttempts: 5 },
  /**
   * A wait for topics to appear, or for their leaders to be known (`topics apply`, `cdc-tail`):
   * bounded by the caller's deadline, not by attempts. A metadata read is cheap and the wait
   * usually short, so it polls every few hundred milliseconds, as the loops before it did.
   */
  topicsAppear: { backoff: { baseMs: 200, maxMs: 1_000 }, deterministicAttempts: 1 },
  /** `schemas register`: a registry restarting, for about half a minute; then the Job's own retry. */
  registration: { backoff: { baseMs: 1_000, maxMs: 8_000 }, deterministicAttempts: 1, retriableAttempts: 6 },
  /**
   * A subject's compatibility level answered 409 because another replica set it at that moment:
   * the rule exists then, and the same PUT updates it, so it is repeated at once, three tries in
   * all (publish/schemas.ts); only a conflict is repeated.
   */
  /**
   * The capture probe's reader, started again whenever it cannot start (a probe topic not created
   * yet, a broker away) for as long as that lasts: the lag it leaves growing says so.
   */
  probeReader: { backoff: Backoffs.captureProbe, deterministicAttempts: Infinity },
  subjectConflict: { backoff: { baseMs: 0, maxMs: 0 }, deterministicAttempts: 1, retriableAttempts: 3 },
  /**
   * `migrate` while another process holds the migrations lock: until the caller's deadline
   * (db/migrate-latest.ts, which ends it at once on any other failure).
   */
  migrate: { backoff: { baseMs: 250, maxMs: 2_000 }, deterministicAttempts: 1 },
  /**
   * `run`'s start-up while the main database or the broker does not answer: for as long as that
   * lasts (an exit would be restarted into the same outage); a wrong configuration exits at once.
   */
  startup: { backoff: { baseMs: 1_000, maxMs: 30_000 }, deterministicAttempts: 1 },
} as const satisfies Record<string, RetryPolicy>;

/**
 * Full jitter (a uniform wait in [0, min(max, base × 2^attempt)]): instances that failed together
 * do not retry together. `attempt` counts from 1.
 */
export function backoffMs(attempt: number, b: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(b.maxMs, b.baseMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
  return Math.round(random() * ceiling);
}
