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
 * In three parts beside this file: the variables' schema and cross-field rules
 * (config-schema.ts), secrets read from files as Kubernetes mounts them (config-secrets.ts), and
 * the connections they describe: TLS, SASL, the registry, more databases (config-connections.ts).
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { ConfigError } from './core/errors';
import { deepFreeze } from './core/deep-freeze';
import type { FirstPassLimits } from './core/first-pass-guard';
import { DEFAULT_PACER_SETTINGS, type PacerSettings } from './core/pacer';
import {
  ConfigParts,
  EnvSchema,
  heartbeatProblem,
  deadlineProblem,
  PRODUCTION_REQUIRED_BY_PART,
  retiredProblems,
  splitList,
  type ConfigPart,
  type ParsedEnv,
} from './config-schema';
import { withSecretFiles } from './config-secrets';
import {
  extraDatabasesOf,
  registryOf,
  saslProblems,
  serviceAccount,
  tlsOf,
  type BasicAuth,
  type DbConnection,
  type KafkaSasl,
  type NamedDatabase,
  type Tls,
} from './config-connections';
import { replicasOf } from './config-replicas';

export { ConfigParts, PRODUCTION_REQUIRED, type ConfigPart } from './config-schema';
export type { BasicAuth, DbConnection, KafkaSasl, NamedDatabase, Tls } from './config-connections';

export type Config = Readonly<{
  /** local: the local stack's defaults and demo tables; production: neither (TB_ENV). */
  env: 'local' | 'production';
  kafka: Readonly<{ brokers: readonly string[]; clientId: string; requestTimeoutMs: number; retries: number; ssl: Tls; sasl: KafkaSasl | undefined }>;
  /** The main database: timebucket's own tables (cursors, switches), and entities without locations. */
  db: DbConnection;
  /** Every database by name (core/entity-catalogue.ts Location.database), `main` = db. */
  databases: Readonly<Record<string, NamedDatabase>>;
  /** The replica of each database that has one, by name (config-replicas.ts), and how often its heartbeat beats. */
  replicas: Readonly<{ byDatabase: Readonly<Record<string, DbConnection>>; heartbeatIntervalMs: number }>;
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
  /** Pacing per database (TB_PACING*): off leaves every database unpaced. */
  pacing: Readonly<{ enabled: boolean; intervalMs: number; settings: PacerSettings; probeIntervalMs: number }>;
  /**
   * retentionMs: event_outbox rows kept at least this long, and until the outbox connector's
   * committed offset is past them (0: for ever); connectUrl: Connect's REST API, where that offset is read.
   */
  publish: Readonly<{ probeIntervalMs: number; retentionMs: number; connectUrl: string | undefined }>;
  scanner: Readonly<{ graceMs: number; intervalMs: number; pageSize: number; maxPagesPerSecond: number }>;
  /** The first-pass guard: TB_FIRST_PASS_MAX_DUE_SHARE, TB_FIRST_PASS_MIN_DUE_ROWS, TB_ALLOW_LARGE_FIRST_PASS. */
  firstPass: FirstPassLimits;
  /** The pause/throttle switches: how often each process polls them. */
  control: Readonly<{ pollMs: number }>;
  consumer: Readonly<{ sessionTimeoutMs: number; heartbeatIntervalMs: number; stallMs: number }>;
  /** Port of /metrics, /healthz, /readyz; 0 turns the endpoint off. */
  httpPort: number;
  /** SIGTERM: finish or abandon the work in flight within this, then exit. */
  shutdownTimeoutMs: number;
  /** Each database pinged this often (db/database-watch.ts). */
  dbPingIntervalMs: number;
  /** The cascader reads the forecast into its metrics this often (hold/forecast-loop.ts); 0: never. */
  forecastIntervalMs: number;
  /** This process's name in client ids and capture probe groups. */
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
  const checked = checkEnv(env, opts.uses ?? ConfigParts, fileProblems);
  if (!checked.ok) throw new ConfigError(`invalid configuration: ${checked.problems.join('; ')}`, { problems: checked.problems });
  return configOf(checked);
}

/** The settings as parsed, with the connection parts checked apart from the schema. */
type CheckedEnv = Readonly<{
  ok: true;
  e: ParsedEnv;
  dbTls: Tls;
  kafkaTls: Tls;
  registry: { url: string | undefined; auth: BasicAuth | undefined };
  databases: Record<string, NamedDatabase>;
  replicas: Record<string, DbConnection>;
  usesKafka: boolean;
}>;

/** Field problems and cross-field problems in one report, so an operator fixes them in one go. */
function checkEnv(
  env: Record<string, string | undefined>,
  uses: readonly ConfigPart[],
  fileProblems: readonly string[],
): CheckedEnv | { ok: false; problems: string[] } {
  const parsed = EnvSchema.safeParse(env);
  const problems = [...fileProblems, ...(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))];
  const crossField = heartbeatProblem(env);
  if (crossField !== undefined) problems.push(crossField);
  const deadline = deadlineProblem(env);
  if (deadline !== undefined) problems.push(deadline);
  problems.push(...retiredProblems(env));
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
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const databases = databasesOf(parsed.data, dbTls!, extraDatabases);
  const replicas = replicasOf(env, parsed.data, databases, problems);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, e: parsed.data, dbTls: dbTls!, kafkaTls: kafkaTls!, registry: registry!, databases, replicas, usesKafka };
}

function configOf({ e, dbTls, kafkaTls, registry, databases, replicas, usesKafka }: CheckedEnv): Config {
  const sasl: KafkaSasl | undefined =
    e.TB_KAFKA_SASL_MECHANISM === undefined || !usesKafka
      ? undefined
      : { mechanism: e.TB_KAFKA_SASL_MECHANISM, username: e.TB_KAFKA_SASL_USERNAME!, password: e.TB_KAFKA_SASL_PASSWORD! };
  const brokers = splitList(e.TB_KAFKA_BROKERS ?? `127.0.0.1:${e.TB_KAFKA_PORT}`);
  const db = dbConnectionOf(e, dbTls);
  return deepFreeze({
    env: e.TB_ENV,
    kafka: { brokers, clientId: e.TB_KAFKA_CLIENT_ID, requestTimeoutMs: e.TB_KAFKA_REQUEST_TIMEOUT_MS, retries: e.TB_KAFKA_RETRIES, ssl: kafkaTls, sasl },
    db,
    databases,
    replicas: { byDatabase: replicas, heartbeatIntervalMs: e.TB_REPLICA_HEARTBEAT_INTERVAL_MS },
    registry: { url: registry.url ?? `http://127.0.0.1:${e.TB_REGISTRY_PORT}/apis/ccompat/v7`, auth: registry.auth },
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
    pacing: {
      enabled: e.TB_PACING === 'on',
      intervalMs: e.TB_PACING_INTERVAL_MS,
      settings: {
        ...DEFAULT_PACER_SETTINGS,
        threadsRunning: e.TB_PACING_MAX_THREADS_RUNNING,
        historyListLength: e.TB_PACING_MAX_HISTORY_LIST_LENGTH,
        replicaLagMs: e.TB_PACING_MAX_REPLICA_LAG_MS,
        commitLatencyFactor: e.TB_PACING_COMMIT_LATENCY_FACTOR,
        minRate: e.TB_PACING_MIN_ROWS_PER_SECOND,
        startRate: e.TB_PACING_START_ROWS_PER_SECOND,
        probeLatencyFactor: e.TB_PACING_PROBE_LATENCY_FACTOR,
        probeLatencyFloorMs: e.TB_PACING_PROBE_LATENCY_FLOOR_MS,
      },
      probeIntervalMs: e.TB_PACING_PROBE_INTERVAL_MS,
    },
    publish: { probeIntervalMs: e.TB_OUTBOX_PROBE_INTERVAL_MS, retentionMs: e.TB_OUTBOX_RETENTION_MS, connectUrl: e.TB_CONNECT_URL },
    scanner: {
      graceMs: e.TB_SCANNER_GRACE_MS,
      intervalMs: e.TB_SCANNER_INTERVAL_MS,
      pageSize: e.TB_SCANNER_PAGE_SIZE,
      maxPagesPerSecond: e.TB_SCANNER_MAX_PAGES_PER_SECOND,
    },
    firstPass: { maxDueShare: e.TB_FIRST_PASS_MAX_DUE_SHARE, minDueRows: e.TB_FIRST_PASS_MIN_DUE_ROWS, allowLarge: e.TB_ALLOW_LARGE_FIRST_PASS === 'true' },
    control: { pollMs: e.TB_CONTROL_POLL_MS },
    consumer: { sessionTimeoutMs: e.TB_SESSION_TIMEOUT_MS, heartbeatIntervalMs: e.TB_HEARTBEAT_INTERVAL_MS, stallMs: e.TB_CONSUMER_STALL_MS },
    httpPort: e.TB_HTTP_PORT,
    shutdownTimeoutMs: e.TB_SHUTDOWN_TIMEOUT_MS,
    dbPingIntervalMs: e.TB_DB_PING_INTERVAL_MS,
    forecastIntervalMs: e.TB_FORECAST_INTERVAL_MS,
    instanceId: e.TB_INSTANCE_ID ?? defaultInstanceId(),
    instanceIdGiven: e.TB_INSTANCE_ID !== undefined,
  });
}

/** Every database by name: `main` and those of TB_DATABASES, which take what they do not set from it. */
function databasesOf(e: ParsedEnv, tls: Tls, extra: ReturnType<typeof extraDatabasesOf>): Record<string, NamedDatabase> {
  const db = dbConnectionOf(e, tls);
  const databases: Record<string, NamedDatabase> = { main: { ...db, name: 'main', cdcTopicPrefix: e.TB_CDC_TOPIC_PREFIX } };
  for (const x of extra) databases[x.name] = { ...db, ...x };
  return databases;
}

/** The main database's connection; the other databases take what they do not set from it. */
function dbConnectionOf(e: ParsedEnv, tls: Tls): DbConnection {
  return {
    host: e.TB_DB_HOST,
    // Production: MySQL's own port unless told; locally the stack's.
    port: e.TB_DB_PORT ?? (e.TB_ENV === 'production' ? 3306 : e.TB_STACK_DB_PORT),
    database: e.TB_DB_NAME,
    user: e.TB_DB_USER,
    password: e.TB_DB_PASSWORD,
    poolMax: e.TB_DB_POOL_MAX,
    tls,
    statementTimeoutMs: e.TB_DB_STATEMENT_TIMEOUT_MS,
    migrateStatementTimeoutMs: e.TB_DB_MIGRATE_STATEMENT_TIMEOUT_MS,
    lockWaitTimeoutS: e.TB_DB_LOCK_WAIT_TIMEOUT_S,
  };
}

/**
 * Host name (in Kubernetes: the pod name, unique per replica) plus a random suffix, so two
 * processes never share an identity, not even restarts of one pod or processes in one
 * container (where process.pid is 1 in every replica).
 */
function defaultInstanceId(): string {
  return `${hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 40)}-${randomBytes(3).toString('hex')}`;
}
