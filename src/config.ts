/**
 * loadConfig(env): the only reader of process.env. Raw variables are validated once, compiled
 * into complete options (durations in ms), and frozen. A bad value fails start-up with every
 * problem listed, instead of surfacing later as a confusing runtime error.
 *
 * TB_ENV=local (the default) fills connection settings in from the local stack started by
 * `make stack-up` (ports from stack/env.sh). TB_ENV=production (the image's default) has no such
 * defaults: every connection setting missing is listed and start-up stops, so a deployment
 * never talks to 127.0.0.1 by accident.
 *
 * Secrets may come from files, as Kubernetes mounts them: TB_DB_PASSWORD_FILE (and the other
 * names in SECRET_FILE_VARIABLES) is read, its trailing newline dropped, in place of the variable.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ConfigError } from './core/errors';
import { deepFreeze } from './core/deep-freeze';

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
/** Variables that may be given as VAR_FILE: a path whose content is the value. */
export const SECRET_FILE_VARIABLES = [
  'TB_DB_USER',
  'TB_DB_PASSWORD',
  'TB_KAFKA_SASL_USERNAME',
  'TB_KAFKA_SASL_PASSWORD',
  'TB_REGISTRY_USERNAME',
  'TB_REGISTRY_PASSWORD',
] as const;

const EnvSchema = z.object({
  TB_ENV: z.enum(['local', 'production']).default('local'),
  TB_KAFKA_PORT: port.default(19092),
  TB_KAFKA_BROKERS: z
    .string()
    .optional()
    .refine((v) => v === undefined || splitList(v).length > 0 && splitList(v).every((b) => BROKER.test(b)), 'expected host:port[,host:port]'),
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
  TB_MARIADB_PORT: port.default(13306),
  TB_DB_HOST: z.string().min(1).default('127.0.0.1'),
  TB_DB_PORT: port.optional(),
  TB_DB_NAME: z.string().regex(/^[A-Za-z0-9_]+$/, 'letters, digits and _ only').default('timebucket'),
  TB_DB_USER: z.string().min(1).default('timebucket'),
  TB_DB_PASSWORD: z.string().default('timebucket'),
  TB_DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
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
    .refine((v) => splitList(v).every((n) => DATABASE_NAME.test(n) && !RESERVED_DATABASE_NAMES.includes(n)), 'names of lower-case letters, digits and _ (at most 16), not main or service'),
  // The local stack's second MariaDB server (stack/env.sh): the local default of TB_DB_<N>_PORT.
  TB_MARIADB2_PORT: port.default(13307),
  TB_REGISTRY_PORT: port.default(18081),
  TB_REGISTRY_URL: z.string().url().optional(),
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
  TB_GROUP_PREFIX: z.string().regex(/^[A-Za-z0-9._-]+$/).default('timebucket'),
  // 2000: a hot minute of 1M coupons drained in 109 s with it, 129 s with 500 (an early hot-minute bench).
  TB_EXPIRER_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(2_000),
  TB_EXPIRER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  TB_MAX_IN_MEMORY_PER_PARTITION: z.coerce.number().int().min(1).default(20_000),
  TB_COMMIT_INTERVAL_MS: z.coerce.number().int().min(10).default(500),
  // How events reach their topics (expire/outbox-writer.ts): `router` writes them encoded into
  // event_outbox, which Debezium's Outbox Event Router publishes from the binlog (its connector:
  // `timebucket connector config --outbox`); `relay` writes JSON into the outbox, which the
  // polling relay encodes, sends and marks.
  TB_PUBLISH_MODE: z.enum(['router', 'relay']).default('router'),
  // Router mode: how often each relay process writes a capture probe into each event_outbox
  // (timebucket_outbox_capture_lag_seconds is the age of the oldest not yet back from Kafka).
  TB_OUTBOX_PROBE_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  // Rows per relay batch; each loop sends them in requests under 768 KiB (publish/send-chunks.ts).
  TB_RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(2_000),
  // How long a relay loop may hold its locked batch waiting on Kafka before the database ends its
  // transaction and frees the rows for other loops (idle_transaction_timeout, whole seconds).
  TB_RELAY_LEASE_MS: z.coerce.number().int().min(1_000).default(30_000),
  TB_RELAY_IDLE_MS: z.coerce.number().int().min(10).default(200),
  // Relay loops per process, each claiming and sending its own batches (claims skip each other's rows).
  // 2: a hot minute of 200,000 (an early hot-minute bench) published the last event 22-24 s after T with 2 loops,
  // 20-21 s with 4 and 29 s with the old single loop, but 4 loops slowed the expiry drain from
  // 10 s to 14 s (2 loops: 12 s) on a 2-core machine where they share the database's CPU.
  TB_RELAY_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  // Published outbox rows older than this are deleted by the relay processes; 0 keeps them for ever.
  TB_OUTBOX_RETENTION_MS: z.coerce.number().int().min(0).default(86_400_000),
  TB_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  // The compensation scanner: rows overdue by more than the grace period (far above the stream's
  // normal delay) are the stream's misses; passes start at most every interval.
  TB_SCANNER_GRACE_MS: z.coerce.number().int().min(0).default(60_000),
  TB_SCANNER_INTERVAL_MS: z.coerce.number().int().min(100).default(30_000),
  TB_SCANNER_PAGE_SIZE: z.coerce.number().int().min(1).max(5_000).default(500),
  TB_SCANNER_MAX_PAGES_PER_SECOND: z.coerce.number().min(0.01).max(1_000).default(5),
  // How often every process reads the operator's pause/throttle switches (`timebucket ctl`): a
  // primary-key read of at most three rows, so a second is cheap and is how fast a pause lands.
  TB_CONTROL_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  TB_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6_000).default(30_000),
  TB_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(100).default(3_000),
  // Above kafkajs's rebalance timeout (60 s) plus a session: a long rebalance is not a stall.
  TB_CONSUMER_STALL_MS: z.coerce.number().int().min(1_000).default(90_000),
  // Below Kubernetes' default grace period (30 s), so a SIGTERM never ends in a SIGKILL.
  TB_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
  // Names this process in client ids and relay loops; default: host name (the pod name) + random suffix.
  TB_INSTANCE_ID: z.string().regex(/^[A-Za-z0-9._-]{1,48}$/, 'letters, digits, ".", "_" and "-", at most 48').optional(),
  });

/** TLS to the database or the brokers; ca is the PEM text of the CA file (undefined: the system's CAs). */
export type Tls = Readonly<{ enabled: false }> | Readonly<{ enabled: true; ca: string | undefined }>;
export type KafkaSasl = Readonly<{ mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain'; username: string; password: string }>;
export type BasicAuth = Readonly<{ username: string; password: string }>;

export type DbConnection = Readonly<{ host: string; port: number; database: string; user: string; password: string; poolMax: number; tls: Tls }>;
/** A database an entity may live on: its connection and the topic prefix of its CDC connector. */
export type NamedDatabase = DbConnection & Readonly<{ name: string; cdcTopicPrefix: string }>;

export type Config = Readonly<{
  /** local: the local stack's defaults and demo tables; production: neither (TB_ENV). */
  env: 'local' | 'production';
  kafka: Readonly<{ brokers: readonly string[]; clientId: string; requestTimeoutMs: number; retries: number; ssl: Tls; sasl: KafkaSasl | undefined }>;
  /** The main database: timebucket's own tables (cursors, switches), and entities without locations. */
  db: DbConnection;
  /** Every database by name (core/entity-catalogue.ts Location.database), `main` = db. */
  databases: Readonly<Record<string, NamedDatabase>>;
  /** url: never with credentials (they move to auth), so it may be logged and put in headers. */
  registry: Readonly<{ url: string; auth: BasicAuth | undefined }>;
  /** CDC topics are `<topicPrefix>.<database>.<table>` (Debezium's naming): see ingest/cdc-topics.ts. */
  cdc: Readonly<{ topicPrefix: string; database: string; partitions: number; retentionMs: number; startFrom: 'latest' | 'earliest' }>;
  logLevel: z.infer<typeof EnvSchema>['TB_LOG_LEVEL'];
  /** `migrate`: the account the running service uses, granted its privileges after migrating. */
  migrate: Readonly<{ serviceAccount: Readonly<{ user: string; host: string }> | undefined }>;
  /** Path of the topology file (tier table and topics), relative to the working directory. */
  topologyPath: string;
  /** Path of the entities file (the tables, their transitions and events): core/entity-file.ts. */
  entitiesPath: string;
  groupPrefix: string;
  expirer: Readonly<{ batchSize: number; concurrency: number; maxInMemoryPerPartition: number; commitIntervalMs: number }>;
  /** concurrency: loops per process; retentionMs: published rows kept this long (0: for ever). */
  publish: Readonly<{ mode: 'router' | 'relay'; probeIntervalMs: number }>;
  relay: Readonly<{ batchSize: number; leaseMs: number; idleMs: number; concurrency: number; retentionMs: number }>;
  scanner: Readonly<{ graceMs: number; intervalMs: number; pageSize: number; maxPagesPerSecond: number }>;
  /** The pause/throttle switches: how often each process polls them. */
  control: Readonly<{ pollMs: number }>;
  consumer: Readonly<{ sessionTimeoutMs: number; heartbeatIntervalMs: number; stallMs: number }>;
  /** Port of /metrics, /healthz, /readyz; 0 turns the endpoint off. */
  httpPort: number;
  /** SIGTERM: finish or abandon the work in flight within this, then exit. */
  shutdownTimeoutMs: number;
  /** This process's name in client ids and relay loop names. */
  instanceId: string;
  /** Whether TB_INSTANCE_ID named it (else it is a generated name with a random suffix). */
  instanceIdGiven: boolean;
}>;

/**
 * `uses`: the parts the caller needs (default: all, as `timebucket run`); in production only
 * their connection settings are required (`topics apply` needs no database password).
 */
export function loadConfig(given: NodeJS.ProcessEnv | Record<string, string | undefined>, opts: { uses?: readonly ConfigPart[] } = {}): Config {
  const { env, problems: fileProblems } = withSecretFiles(given);
  const parsed = EnvSchema.safeParse(env);
  // Field problems and cross-field problems in one report, so an operator fixes them in one go.
  const problems = [...fileProblems, ...(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))];
  const crossField = heartbeatProblem(env);
  if (crossField !== undefined) problems.push(crossField);
  const uses = opts.uses ?? ConfigParts;
  if (env['TB_ENV'] === 'production') {
    const required = uses.flatMap((p) => PRODUCTION_REQUIRED_BY_PART[p]);
    for (const name of required) if (!env[name]) problems.push(`${name}: required when TB_ENV=production (no local-stack default)`);
  }
  const dbTls = tlsOf(env, 'TB_DB_TLS', 'TB_DB_TLS_CA_FILE', problems);
  const kafkaTls = tlsOf(env, 'TB_KAFKA_SSL', 'TB_KAFKA_SSL_CA_FILE', problems);
  // A command that never talks to Kafka (migrate) needs no SASL credentials, even where the
  // shared settings name a mechanism: its pod is not given the Kafka Secret.
  const usesKafka = uses.includes('kafka');
  if (usesKafka) problems.push(...saslProblems(env));
  const registry = registryOf(env, problems);
  const extraDatabases = parsed.success ? extraDatabasesOf(env, parsed.data, uses.includes('db'), problems) : [];
  if (!parsed.success || problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`, { problems });
  const e = parsed.data;
  const sasl: KafkaSasl | undefined =
    e.TB_KAFKA_SASL_MECHANISM === undefined || !usesKafka ? undefined : { mechanism: e.TB_KAFKA_SASL_MECHANISM, username: e.TB_KAFKA_SASL_USERNAME!, password: e.TB_KAFKA_SASL_PASSWORD! };
  const brokers = splitList(e.TB_KAFKA_BROKERS ?? `127.0.0.1:${e.TB_KAFKA_PORT}`);
  const db: DbConnection = {
    host: e.TB_DB_HOST,
    // Production: MySQL's own port unless told; locally the stack's.
    port: e.TB_DB_PORT ?? (e.TB_ENV === 'production' ? 3306 : e.TB_MARIADB_PORT),
    database: e.TB_DB_NAME,
    user: e.TB_DB_USER,
    password: e.TB_DB_PASSWORD,
    poolMax: e.TB_DB_POOL_MAX,
    tls: dbTls!,
  };
  const databases: Record<string, NamedDatabase> = { main: { ...db, name: 'main', cdcTopicPrefix: e.TB_CDC_TOPIC_PREFIX } };
  for (const x of extraDatabases) databases[x.name] = { ...db, ...x };
  return deepFreeze({
    env: e.TB_ENV,
    kafka: { brokers, clientId: e.TB_KAFKA_CLIENT_ID, requestTimeoutMs: e.TB_KAFKA_REQUEST_TIMEOUT_MS, retries: e.TB_KAFKA_RETRIES, ssl: kafkaTls!, sasl },
    db,
    databases,
    registry: { url: registry!.url ?? `http://127.0.0.1:${e.TB_REGISTRY_PORT}/apis/ccompat/v7`, auth: registry!.auth },
    cdc: {
      topicPrefix: e.TB_CDC_TOPIC_PREFIX,
      database: e.TB_DB_NAME,
      partitions: e.TB_CDC_PARTITIONS,
      retentionMs: e.TB_CDC_RETENTION_MS,
      startFrom: e.TB_CDC_START_FROM,
    },
    logLevel: e.TB_LOG_LEVEL,
    migrate: { serviceAccount: serviceAccount(e.TB_DB_SERVICE_USER) },
    topologyPath: e.TB_TOPOLOGY,
    entitiesPath: e.TB_ENTITIES,
    groupPrefix: e.TB_GROUP_PREFIX,
    expirer: {
      batchSize: e.TB_EXPIRER_BATCH_SIZE,
      concurrency: e.TB_EXPIRER_CONCURRENCY,
      maxInMemoryPerPartition: e.TB_MAX_IN_MEMORY_PER_PARTITION,
      commitIntervalMs: e.TB_COMMIT_INTERVAL_MS,
    },
    publish: { mode: e.TB_PUBLISH_MODE, probeIntervalMs: e.TB_OUTBOX_PROBE_INTERVAL_MS },
    relay: {
      batchSize: e.TB_RELAY_BATCH_SIZE,
      leaseMs: e.TB_RELAY_LEASE_MS,
      idleMs: e.TB_RELAY_IDLE_MS,
      concurrency: e.TB_RELAY_CONCURRENCY,
      retentionMs: e.TB_OUTBOX_RETENTION_MS,
    },
    scanner: {
      graceMs: e.TB_SCANNER_GRACE_MS,
      intervalMs: e.TB_SCANNER_INTERVAL_MS,
      pageSize: e.TB_SCANNER_PAGE_SIZE,
      maxPagesPerSecond: e.TB_SCANNER_MAX_PAGES_PER_SECOND,
    },
    control: { pollMs: e.TB_CONTROL_POLL_MS },
    consumer: { sessionTimeoutMs: e.TB_SESSION_TIMEOUT_MS, heartbeatIntervalMs: e.TB_HEARTBEAT_INTERVAL_MS, stallMs: e.TB_CONSUMER_STALL_MS },
    httpPort: e.TB_HTTP_PORT,
    shutdownTimeoutMs: e.TB_SHUTDOWN_TIMEOUT_MS,
    instanceId: e.TB_INSTANCE_ID ?? defaultInstanceId(),
    instanceIdGiven: e.TB_INSTANCE_ID !== undefined,
  });
}

type ParsedEnv = z.output<typeof EnvSchema>;

/**
 * TB_DATABASES' connections: TB_DB_<N>_HOST required in production (locally 127.0.0.1, port the
 * stack's second server); name, user and password default to the main database's.
 */
function extraDatabasesOf(env: Record<string, string | undefined>, e: ParsedEnv, usesDb: boolean, problems: string[]): Array<Omit<NamedDatabase, 'poolMax' | 'tls'>> {
  return splitList(e.TB_DATABASES).map((name) => {
    const v = (suffix: string) => env[`TB_DB_${name.toUpperCase()}_${suffix}`];
    const at = (suffix: string) => `TB_DB_${name.toUpperCase()}_${suffix}`;
    if (e.TB_ENV === 'production' && usesDb && !v('HOST')) problems.push(`${at('HOST')}: required when TB_ENV=production for database ${name} (TB_DATABASES)`);
    const portText = v('PORT');
    const portValue = portText === undefined ? (e.TB_ENV === 'production' ? 3306 : e.TB_MARIADB2_PORT) : Number(portText);
    if (!Number.isInteger(portValue) || portValue < 1 || portValue > 65535) problems.push(`${at('PORT')}: not a port: ${JSON.stringify(portText)}`);
    const schema = v('NAME') ?? e.TB_DB_NAME;
    if (!/^[A-Za-z0-9_]+$/.test(schema)) problems.push(`${at('NAME')}: letters, digits and _ only`);
    const prefix = v('CDC_TOPIC_PREFIX') ?? `${e.TB_CDC_TOPIC_PREFIX}_${name}`;
    if (!/^[A-Za-z0-9._-]+$/.test(prefix)) problems.push(`${at('CDC_TOPIC_PREFIX')}: letters, digits, '.', '_' and '-' only`);
    return { name, host: v('HOST') ?? '127.0.0.1', port: portValue, database: schema, user: v('USER') ?? e.TB_DB_USER, password: v('PASSWORD') ?? e.TB_DB_PASSWORD, cdcTopicPrefix: prefix };
  });
}

function serviceAccount(value: string | undefined): { user: string; host: string } | undefined {
  if (value === undefined) return undefined;
  const [user, host] = value.split('@');
  return { user: user!, host: host ?? '%' };
}

/**
 * TLS on or off, and the CA it trusts. A CA file without TLS on is a problem (it would be ignored),
 * as is one that cannot be read; undefined only when there are problems.
 */
function tlsOf(env: Record<string, string | undefined>, switchName: string, caName: string, problems: string[]): Tls | undefined {
  const caFile = env[caName];
  if (caFile !== undefined && env[switchName] !== 'on') problems.push(`${caName}: set ${switchName}=on too (a CA without TLS would be ignored)`);
  const ca = caFile === undefined ? undefined : readTextFile(caFile);
  if (ca === null) {
    problems.push(`${caName}: cannot read ${caFile}`);
    return undefined;
  }
  return env[switchName] === 'on' ? { enabled: true, ca } : { enabled: false };
}

/** A mechanism needs a user name and password; they mean nothing without one. */
const SASL_CREDENTIALS = ['TB_KAFKA_SASL_USERNAME', 'TB_KAFKA_SASL_PASSWORD'] as const;

function saslProblems(env: Record<string, string | undefined>): string[] {
  const mechanism = env['TB_KAFKA_SASL_MECHANISM'];
  if (mechanism === undefined) {
    return SASL_CREDENTIALS.filter((n) => env[n] !== undefined).map((n) => `${n}: set TB_KAFKA_SASL_MECHANISM too (credentials without a mechanism would be ignored)`);
  }
  const problems = SASL_CREDENTIALS.filter((n) => !env[n])
    .map((n) => `${n}: required with TB_KAFKA_SASL_MECHANISM (or ${n}_FILE)`);
  // PLAIN sends the password as it is: only inside TLS.
  if (mechanism === 'plain' && env['TB_KAFKA_SSL'] !== 'on') problems.push('TB_KAFKA_SASL_MECHANISM: plain sends the password in clear; set TB_KAFKA_SSL=on');
  return problems;
}

/**
 * The registry URL without credentials, and the basic-auth credentials from the URL's user info
 * or TB_REGISTRY_USERNAME/PASSWORD (not both). The URL itself may be missing (the default applies).
 */
function registryOf(env: Record<string, string | undefined>, problems: string[]): { url: string | undefined; auth: BasicAuth | undefined } | undefined {
  const raw = env['TB_REGISTRY_URL'];
  let url: URL | undefined;
  try {
    url = raw === undefined ? undefined : new URL(raw);
  } catch {
    return undefined; // the schema reports the malformed URL
  }
  let fromUrl: BasicAuth | undefined;
  if (url !== undefined && (url.username !== '' || url.password !== '')) {
    try {
      fromUrl = { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
    } catch {
      // The credentials are never repeated in a message.
      problems.push('TB_REGISTRY_URL: its user info is not valid percent-encoding (write % as %25)');
      return undefined;
    }
  }
  const username = env['TB_REGISTRY_USERNAME'];
  const password = env['TB_REGISTRY_PASSWORD'];
  if (fromUrl !== undefined && (username !== undefined || password !== undefined)) {
    problems.push('TB_REGISTRY_USERNAME: the registry URL carries credentials too; give them one way');
    return undefined;
  }
  if ((username === undefined) !== (password === undefined)) {
    problems.push(`${username === undefined ? 'TB_REGISTRY_USERNAME' : 'TB_REGISTRY_PASSWORD'}: required with ${username === undefined ? 'TB_REGISTRY_PASSWORD' : 'TB_REGISTRY_USERNAME'}`);
    return undefined;
  }
  if (url !== undefined) {
    url.username = '';
    url.password = '';
  }
  const auth = fromUrl ?? (username !== undefined ? { username, password: password! } : undefined);
  return { url: url?.toString().replace(/\/$/, ''), auth };
}

/** The file's text, or null when it cannot be read (the caller reports it as a problem). */
function readTextFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The environment with each VAR_FILE read into VAR; a file that cannot be read, or both given, is a problem. */
function withSecretFiles(given: Record<string, string | undefined>): { env: Record<string, string | undefined>; problems: string[] } {
  const env = { ...given };
  const problems: string[] = [];
  // Each database of TB_DATABASES has its own user and password, which may come from files too.
  const perDatabase = splitList(given['TB_DATABASES'] ?? '').flatMap((n) => [`TB_DB_${n.toUpperCase()}_USER`, `TB_DB_${n.toUpperCase()}_PASSWORD`]);
  for (const name of [...SECRET_FILE_VARIABLES, ...perDatabase]) {
    const path = given[`${name}_FILE`];
    if (path === undefined || path === '') continue;
    if (given[name] !== undefined) {
      problems.push(`${name}_FILE: ${name} is set too; give one of them`);
      continue;
    }
    try {
      env[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      // The path is not a secret; the file's content never appears in a message.
      problems.push(`${name}_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return { env, problems };
}

function splitList(value: string): string[] {
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
function heartbeatProblem(env: Record<string, string | undefined>): string | undefined {
  const heartbeat = Number(env['TB_HEARTBEAT_INTERVAL_MS'] ?? 3_000);
  const session = Number(env['TB_SESSION_TIMEOUT_MS'] ?? 30_000);
  if (!Number.isFinite(heartbeat) || !Number.isFinite(session)) return undefined;
  return heartbeat * 3 > session ? 'TB_HEARTBEAT_INTERVAL_MS: must be at most a third of TB_SESSION_TIMEOUT_MS' : undefined;
}

/**
 * Host name (in Kubernetes: the pod name, unique per replica) plus a random suffix, so two
 * processes never share an identity, not even restarts of one pod or processes in one
 * container (where process.pid is 1 in every replica).
 */
function defaultInstanceId(): string {
  return `${hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 40)}-${randomBytes(3).toString('hex')}`;
}
