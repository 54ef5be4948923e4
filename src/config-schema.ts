/**
 * The configuration's variables as one zod schema (types, ranges, local-stack defaults), the
 * parts a command may need, and the rules across fields. Read by loadConfig (config.ts) alone.
 */
import { z } from 'zod';
import { DEFAULT_PACER_SETTINGS } from './core/pacer';

const port = z.coerce.number().int().min(1).max(65535);

const BROKER = /^[^:\s]+:\d{1,5}$/;
/** As an entities file names a database (core/entity-file.ts). */
const DATABASE_NAME = /^[a-z][a-z0-9_]{0,15}$/;
const RESERVED_DATABASE_NAMES: readonly string[] = ['main', 'service'];

/** What a command connects to or reads; production requires explicit settings for these only. */
export const ConfigParts = ['kafka', 'db', 'registry', 'topology', 'entities'] as const;
export type ConfigPart = (typeof ConfigParts)[number];

/** Settings with a local-stack default that production must give explicitly, by part. */
export const PRODUCTION_REQUIRED_BY_PART: Readonly<Record<ConfigPart, readonly string[]>> = {
  kafka: ['TB_KAFKA_BROKERS'],
  db: ['TB_DB_HOST', 'TB_DB_USER', 'TB_DB_PASSWORD'],
  registry: ['TB_REGISTRY_URL'],
  topology: ['TB_TOPOLOGY'],
  entities: ['TB_ENTITIES'],
};
export const PRODUCTION_REQUIRED: readonly string[] = ConfigParts.flatMap((p) => PRODUCTION_REQUIRED_BY_PART[p]);

// Named once: the schema's defaults, and the heartbeat rule when a variable is not given.
const DEFAULT_SESSION_TIMEOUT_MS = 30_000;
const DEFAULT_HEARTBEAT_INTERVAL_MS = 3_000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
const DEFAULT_LOCK_WAIT_TIMEOUT_S = 10;

export const EnvSchema = z.object({
  TB_ENV: z.enum(['local', 'production']).default('local'),
  TB_KAFKA_PORT: port.default(19092),
  TB_KAFKA_BROKERS: z
    .string()
    .optional()
    .refine((v) => v === undefined || (splitList(v).length > 0 && splitList(v).every((b) => BROKER.test(b))), 'expected host:port[,host:port]'),
  TB_KAFKA_CLIENT_ID: z.string().min(1).default('timebucket'),
  // TLS to the brokers: the certificate verified against the system's CAs or, when
  // TB_KAFKA_SSL_CA_FILE is set, against that CA alone.
  TB_KAFKA_SSL: z.enum(['off', 'on']).default('off'),
  TB_KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
  // SASL: set the mechanism, and the user name and password with it (or their _FILE paths).
  TB_KAFKA_SASL_MECHANISM: z.enum(['scram-sha-512', 'scram-sha-256', 'plain']).optional(),
  TB_KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  TB_KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  // How long a request to a broker may take before kafkajs gives up on it (and retries).
  TB_KAFKA_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(30_000),
  // How often kafkajs retries a failed request (backoff 200 ms doubling to 5 s) before it gives up.
  TB_KAFKA_RETRIES: z.coerce.number().int().min(0).max(20).default(8),
  TB_STACK_DB_PORT: port.default(13306),
  TB_DB_HOST: z.string().min(1).default('127.0.0.1'),
  TB_DB_PORT: port.optional(),
  TB_DB_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_]+$/, 'letters, digits and _ only')
    .default('timebucket'),
  TB_DB_USER: z.string().min(1).default('timebucket'),
  TB_DB_PASSWORD: z.string().default('timebucket'),
  TB_DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  // Every statement's deadline (db/statement-deadline.ts): past it the statement fails as
  // retriable and its connection is closed. 15 s: above the row-lock wait below (a lock queue
  // ends in 1205 first), far above any statement of a healthy database on the service's paths
  // (an expiry batch of 2,000 rows took ~0.2 s in the benchmarks), and short enough that a
  // frozen server opens its breaker within seconds of the first batch sent to it.
  TB_DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(DEFAULT_STATEMENT_TIMEOUT_MS),
  // The sessions' innodb_lock_wait_timeout (the server's default is 50 s).
  TB_DB_LOCK_WAIT_TIMEOUT_S: z.coerce.number().int().min(1).max(3_600).default(DEFAULT_LOCK_WAIT_TIMEOUT_S),
  // `migrate`'s statements: DDL on a large table runs for minutes; 0 for none.
  TB_DB_MIGRATE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(3_600_000),
  // `timebucket migrate`, run as the owner: then grant this user (name or name@host, host
  // default %) exactly what the running service needs (db/service-grants.ts).
  TB_DB_SERVICE_USER: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+(@[A-Za-z0-9_.%-]+)?$/, 'a user name, or name@host')
    .optional(),
  // TLS to the database: off (the local stack), or on with the server's certificate verified
  // against the system's CAs or, when TB_DB_TLS_CA_FILE is set, against that CA alone.
  TB_DB_TLS: z.enum(['off', 'on']).default('off'),
  TB_DB_TLS_CA_FILE: z.string().min(1).optional(),
  // More databases an entities file may name (locations[].database), comma-separated. Each name N
  // is configured by TB_DB_<N>_HOST, _PORT, _NAME, _USER, _PASSWORD (the last three default to
  // the main database's), and _CDC_TOPIC_PREFIX (its connector's topic.prefix, default
  // <TB_CDC_TOPIC_PREFIX>_<n>); TLS and the pool size are the main database's.
  TB_DATABASES: z
    .string()
    .default('')
    // Not main (TB_DB_*), nor service, whose TB_DB_SERVICE_USER is migrate's service account.
    .refine(
      (v) => splitList(v).every((n) => DATABASE_NAME.test(n) && !RESERVED_DATABASE_NAMES.includes(n)),
      'names of lower-case letters, digits and _ (at most 16), not main or service',
    ),
  // The local stack's second MariaDB server (stack/env.sh): the local default of TB_DB_<N>_PORT.
  TB_STACK_DB2_PORT: port.default(13307),
  // The local stack's replica of server 1 (stack/env.sh): the local default of TB_DB_REPLICA_PORT.
  TB_STACK_REPLICA_PORT: port.default(13308),
  // How often each expirer process writes its heartbeat row on every database that has a replica
  // (TB_DB_REPLICA_HOST, TB_DB_<N>_REPLICA_HOST: config-replicas.ts), and reads it back on the
  // replica: the resolution of the replica lag it measures (db/replica-heartbeat.ts).
  TB_REPLICA_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(50).max(10_000).default(250),
  TB_REGISTRY_PORT: port.default(18081),
  // At most 990: ce_dataschema (VARCHAR(1024)) holds it plus /schemas/ids/<id>.
  TB_REGISTRY_URL: z.string().url().max(990).optional(),
  // Basic auth to the registry; credentials in TB_REGISTRY_URL (https://user:pass@host) work too.
  TB_REGISTRY_USERNAME: z.string().min(1).optional(),
  TB_REGISTRY_PASSWORD: z.string().min(1).optional(),
  TB_CDC_TOPIC_PREFIX: z.string().min(1).default('tbcdc'),
  // The CDC topics as `topics apply` creates them when Debezium has not yet (it creates a table's
  // topic only with the table's first change); the same as the connector's topic.creation.
  TB_CDC_PARTITIONS: z.coerce.number().int().min(1).default(4),
  TB_CDC_RETENTION_MS: z.coerce.number().int().min(1).default(604_800_000),
  // Where a repartitioner group with no committed offsets starts: at the end of the CDC topics
  // (rows that already exist are scheduled by `timebucket backfill`), or replaying their history.
  TB_CDC_START_FROM: z.enum(['latest', 'earliest']).default('latest'),
  TB_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TB_TOPOLOGY: z.string().min(1).default('topics/local.json'),
  TB_ENTITIES: z.string().min(1).default('entities/default.json'),
  TB_GROUP_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .default('timebucket'),
  // 2000: a hot minute of 1M coupons drained in 109 s with it, 129 s with 500 (an early hot-minute bench).
  TB_EXPIRER_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(2_000),
  TB_EXPIRER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  // Pacing per database (core/pacer.ts; docs/operations.md, "Pacing per database"): the expirer sends each
  // database rows only as fast as its health allows (a probe statement's latency and the batches'
  // commit latency against their quiet baselines, Threads_running, InnoDB's history list, replica
  // lag), and never slower than the
  // entities' lateness budgets need. The defaults are core/pacer.ts's, each justified there.
  TB_PACING: z.enum(['on', 'off']).default('on'),
  // How often each database's signals are read and its rate adjusted: a status read a second.
  TB_PACING_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  TB_PACING_MAX_THREADS_RUNNING: z.coerce.number().int().min(1).default(DEFAULT_PACER_SETTINGS.threadsRunning),
  TB_PACING_MAX_HISTORY_LIST_LENGTH: z.coerce.number().int().min(1).default(DEFAULT_PACER_SETTINGS.historyListLength),
  TB_PACING_MAX_REPLICA_LAG_MS: z.coerce.number().int().min(1).default(DEFAULT_PACER_SETTINGS.replicaLagMs),
  TB_PACING_COMMIT_LATENCY_FACTOR: z.coerce.number().min(1.1).max(1_000).default(DEFAULT_PACER_SETTINGS.commitLatencyFactor),
  TB_PACING_MIN_ROWS_PER_SECOND: z.coerce.number().min(1).default(DEFAULT_PACER_SETTINGS.minRate),
  TB_PACING_START_ROWS_PER_SECOND: z.coerce.number().min(1).default(DEFAULT_PACER_SETTINGS.startRate),
  TB_PACING_PROBE_LATENCY_FACTOR: z.coerce.number().min(1.1).max(1_000).default(DEFAULT_PACER_SETTINGS.probeLatencyFactor),
  TB_PACING_PROBE_LATENCY_FLOOR_MS: z.coerce.number().min(0).max(60_000).default(DEFAULT_PACER_SETTINGS.probeLatencyFloorMs),
  // How often a database is probed (db/latency-probe.ts): ten a second give each adjustment a
  // tail of ten answers, for one `SELECT 1` each on a connection of the probe's own.
  TB_PACING_PROBE_INTERVAL_MS: z.coerce.number().int().min(10).max(10_000).default(100),
  TB_MAX_IN_MEMORY_PER_PARTITION: z.coerce.number().int().min(1).default(20_000),
  TB_COMMIT_INTERVAL_MS: z.coerce.number().int().min(10).default(500),
  // How often each outbox-keeper process writes a capture probe into each event_outbox
  // (timebucket_outbox_capture_lag_seconds is the age of the oldest not yet back from Kafka).
  TB_OUTBOX_PROBE_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  // event_outbox rows older than this, and than what the outbox connector's committed offset
  // says is on the wire, are deleted by the outbox-keeper processes; 0 keeps them for ever.
  TB_OUTBOX_RETENTION_MS: z.coerce.number().int().min(0).default(86_400_000),
  // Kafka Connect's REST API, where retention reads the outbox connectors' committed offsets
  // (publish/connector-watermark.ts); without it retention deletes nothing.
  TB_CONNECT_URL: z.string().url().max(990).optional(),
  TB_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  // The compensation scanner: rows overdue by more than the grace period (far above the stream's
  // normal delay) are the stream's misses; passes start at most every interval.
  TB_SCANNER_GRACE_MS: z.coerce.number().int().min(0).default(60_000),
  TB_SCANNER_INTERVAL_MS: z.coerce.number().int().min(100).default(30_000),
  TB_SCANNER_PAGE_SIZE: z.coerce.number().int().min(1).max(5_000).default(500),
  TB_SCANNER_MAX_PAGES_PER_SECOND: z.coerce.number().min(0.01).max(1_000).default(5),
  // The first-pass guard (core/first-pass-guard.ts): start-up and `check` refuse a first scanner
  // pass that would transition more than this share of a transition's rows with a due time, once
  // at least TB_FIRST_PASS_MIN_DUE_ROWS are due (a wrong mapping transitions a whole table, and
  // that cannot be taken back); TB_ALLOW_LARGE_FIRST_PASS=true when the backlog is meant to go.
  TB_FIRST_PASS_MAX_DUE_SHARE: z.coerce.number().min(0.1).max(0.99).default(0.5),
  TB_FIRST_PASS_MIN_DUE_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  TB_ALLOW_LARGE_FIRST_PASS: z.enum(['false', 'true']).default('false'),
  // How often every process reads the operator's pause/throttle switches (`timebucket ctl`): a
  // primary-key read of at most three rows, so a second is cheap and is how fast a pause lands.
  TB_CONTROL_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  TB_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6_000).default(DEFAULT_SESSION_TIMEOUT_MS),
  TB_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(100).default(DEFAULT_HEARTBEAT_INTERVAL_MS),
  // Above kafkajs's rebalance timeout (60 s) plus a session: a long rebalance is not a stall.
  TB_CONSUMER_STALL_MS: z.coerce.number().int().min(1_000).default(90_000),
  // Below Kubernetes' default grace period (30 s), so a SIGTERM never ends in a SIGKILL.
  TB_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
  // How often each database is pinged (/readyz, timebucket_database_up) and one that did not
  // answer at start is asked again before its tables are checked and its batches run.
  TB_DB_PING_INTERVAL_MS: z.coerce.number().int().min(100).max(300_000).default(5_000),
  // How often the cascader role reads the rings' offsets into timebucket_forecast_entries
  // (hold/forecast-loop.ts): a few admin requests per ring topic; 0 turns it off.
  TB_FORECAST_INTERVAL_MS: z.coerce.number().int().min(0).max(600_000).default(15_000),
  // Names this process in client ids and capture probe groups; default: host name (the pod name) + random suffix.
  TB_INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,48}$/, 'letters, digits, ".", "_" and "-", at most 48')
    .optional(),
});

export type ParsedEnv = z.output<typeof EnvSchema>;

export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
}

/**
 * kafkajs's rule of thumb: a session survives at least three missed heartbeats. Checked on the
 * raw values, so it is reported together with field problems (values that do not parse are
 * reported by the schema).
 */
export function heartbeatProblem(env: Record<string, string | undefined>): string | undefined {
  const heartbeat = Number(env['TB_HEARTBEAT_INTERVAL_MS'] ?? DEFAULT_HEARTBEAT_INTERVAL_MS);
  const session = Number(env['TB_SESSION_TIMEOUT_MS'] ?? DEFAULT_SESSION_TIMEOUT_MS);
  if (!Number.isFinite(heartbeat) || !Number.isFinite(session)) return undefined;
  return heartbeat * 3 > session ? 'TB_HEARTBEAT_INTERVAL_MS: must be at most a third of TB_SESSION_TIMEOUT_MS' : undefined;
}

/** A statement deadline at or under the row-lock wait would close connections that only waited for a lock. */
export function deadlineProblem(env: Record<string, string | undefined>): string | undefined {
  const deadlineMs = Number(env['TB_DB_STATEMENT_TIMEOUT_MS'] ?? DEFAULT_STATEMENT_TIMEOUT_MS);
  const lockWaitS = Number(env['TB_DB_LOCK_WAIT_TIMEOUT_S'] ?? DEFAULT_LOCK_WAIT_TIMEOUT_S);
  if (!Number.isFinite(deadlineMs) || !Number.isFinite(lockWaitS)) return undefined;
  return deadlineMs <= lockWaitS * 1_000
    ? 'TB_DB_STATEMENT_TIMEOUT_MS: must exceed TB_DB_LOCK_WAIT_TIMEOUT_S (a lock wait ends in 1205 before the deadline)'
    : undefined;
}

/**
 * Variables of the polling relay, which is gone (events are published by Debezium's Outbox
 * Event Router alone): a deployment that still sets one is told, instead of silently running
 * without what it asked for.
 */
const RETIRED = ['TB_PUBLISH_MODE', 'TB_RELAY_BATCH_SIZE', 'TB_RELAY_LEASE_MS', 'TB_RELAY_IDLE_MS', 'TB_RELAY_CONCURRENCY'] as const;

export function retiredProblems(env: Record<string, string | undefined>): string[] {
  return RETIRED.filter((name) => env[name] !== undefined && env[name] !== '').map(
    (name) => `${name}: no longer read: events are published by the outbox connector alone (\`timebucket connector config --outbox\`); remove it`,
  );
}
