/**
 * The Debezium connector configuration for the tables the entities file maps, as Kafka
 * Connect's REST API takes it (PUT /connectors/<name>/config): what `timebucket connector
 * config` prints and what the local stack registers. One connector per database.
 *
 * What it settles, so a team does not have to:
 *   - the table list: every mapped table of the database (each table of a set), and of each
 *     table only the columns timebucket reads (id, status, due columns);
 *   - a table set: its tables routed into one topic per entity, <prefix>.<schema>.<entity>, by
 *     Debezium's ByLogicalTableRouter, which adds the physical table to the key
 *     (__dbz__physicalTableIdentifier) so keys stay unique; source.table still names the table
 *     (ingest/cdc-topics.ts reads it to place the change);
 *   - the expirable-change filter (stack/connect-smt, NotExpirableChange): per table its status
 *     column and the states in which a row may be due (the from-states of all its transitions).
 *     A table whose states cannot be written in the predicate's list syntax (a value with a
 *     comma, or blank at an end) gets no rule: nothing of it is dropped, which is the safe side
 *     (the repartitioner reads and ignores what is not due), and `warnings` says so;
 *   - the time encoding timebucket decodes (adaptive_time_microseconds), tombstones on delete,
 *     and the CDC topics' creation as `topics apply` declares them.
 *
 * Pure: the caller supplies the server flavour (db/sql/server-flavour.ts detects it) and secrets.
 */
import { MAIN_DATABASE, type Entity, type EntityCatalogue } from '../core/entity-catalogue';
import type { ServerFlavour } from '../core/column-info';

export type { ServerFlavour };

export type ConnectorConfigOptions = Readonly<{
  name: string;
  /** The entities file's name of the database this connector captures (default main). */
  database?: string;
  flavour: ServerFlavour;
  db: Readonly<{
    host: string;
    port: number;
    database: string;
    user: string;
    password: string;
    tls: boolean;
    /**
     * With tls: a JKS or PKCS12 truststore on the Connect workers holding the CA that signed the
     * server's certificate (its password a value or a config-provider reference). Without one
     * the connector verifies against the workers' JVM truststore: public CAs only.
     */
    truststore?: Readonly<{ path: string; password: string }>;
  }>;
  /** Debezium's topic.prefix: CDC topics are <prefix>.<database>.<table> (TB_CDC_TOPIC_PREFIX). */
  topicPrefix: string;
  /** A replication client id unique among everything reading this server's binlog. */
  serverId: number;
  /** Where Debezium keeps the tables' schema history: a Kafka topic (production) or a file (one-node dev stack). */
  history: Readonly<{ kind: 'kafka'; brokers: readonly string[]; topic: string; security?: HistorySecurity }> | Readonly<{ kind: 'file'; path: string }>;
  topics: Readonly<{ partitions: number; replicationFactor: number; retentionMs: number }>;
}>;

/**
 * How the schema history's own Kafka clients reach a secured cluster (the worker's settings are
 * not theirs): TLS verified against the CA (its PEM text in the configuration, a public
 * certificate, or a PEM file on the Connect workers), SASL with the account given (values or
 * Connect config-provider references).
 */
export type HistorySecurity = Readonly<{
  tls: boolean;
  ca?: Readonly<{ pem: string }> | Readonly<{ file: string }>;
  sasl?: Readonly<{ mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain'; username: string; password: string }>;
}>;

export type ConnectorConfig = Readonly<{ name: string; config: Readonly<Record<string, string>>; warnings: readonly string[] }>;

const CONNECTOR_CLASS: Readonly<Record<ServerFlavour, string>> = {
  mariadb: 'io.debezium.connector.mariadb.MariaDbConnector',
  mysql: 'io.debezium.connector.mysql.MySqlConnector',
};

/** The two connectors name their modes differently; both verify the certificate and the host name. */
const SSL_MODE: Readonly<Record<ServerFlavour, Readonly<{ off: string; verify: string }>>> = {
  mariadb: { off: 'disable', verify: 'verify-full' },
  mysql: { off: 'disabled', verify: 'verify_identity' },
};

/** What to say of a verified TLS connection without a truststore of its own. */
export function truststoreWarnings(db: ConnectorConfigOptions['db']): string[] {
  return db.tls && db.truststore === undefined
    ? ["the database certificate is verified against the Connect workers' JVM truststore (public CAs only): give --db-truststore when your own CA signed it"]
    : [];
}

export function connectorConfig(catalogue: EntityCatalogue, opts: ConnectorConfigOptions): ConnectorConfig {
  const warnings: string[] = [...truststoreWarnings(opts.db)];
  const db = opts.db.database;
  const here = opts.database ?? MAIN_DATABASE;
  const tables = catalogue.entities.flatMap((e) => e.locations.filter((l) => l.database === here).map((l) => ({ entity: e, table: l.table })));
  const config: Record<string, string> = {
    ...connectionConfig(opts),
    'topic.prefix': opts.topicPrefix,
    'database.include.list': db,
    // Regular expressions matched against <database>.<table>: the dot escaped, so nothing else matches.
    'table.include.list': tables.map((t) => `${db}\\.${t.table}`).join(','),
    // Only the columns the repartitioner reads (the id, the status, each transition's due
    // column): Debezium builds, filters and serialises no more of each row than that.
    'column.include.list': tables.map((t) => `${db}\\.${t.table}\\.(${capturedColumns(t.entity).map(escapeRegex).join('|')})`).join(','),
    'include.schema.changes': 'false',
    // DATETIME(3) → io.debezium.time.Timestamp (epoch ms of the wall-clock value, UTC as written);
    // DATETIME(4-6) → MicroTimestamp; TIMESTAMP → ZonedTimestamp: core/debezium-time.ts decodes each.
    'time.precision.mode': 'adaptive_time_microseconds',
    'tombstones.on.delete': 'true',
    ...transformConfig(tables, opts.topicPrefix, db, warnings),
    ...historyConfig(opts.history),
    'topic.creation.default.replication.factor': String(opts.topics.replicationFactor),
    'topic.creation.default.partitions': String(opts.topics.partitions),
    'topic.creation.default.cleanup.policy': 'delete',
    'topic.creation.default.retention.ms': String(opts.topics.retentionMs),
  };
  return { name: opts.name, config, warnings };
}

/**
 * What every timebucket connector of a database shares (this one and the outbox's,
 * publish/outbox-connector-config.ts): its class, one task, how it reaches the server.
 */
export function connectionConfig(opts: Pick<ConnectorConfigOptions, 'flavour' | 'db' | 'serverId'>): Record<string, string> {
  return {
    'connector.class': CONNECTOR_CLASS[opts.flavour],
    'tasks.max': '1',
    'database.hostname': opts.db.host,
    'database.port': String(opts.db.port),
    'database.user': opts.db.user,
    'database.password': opts.db.password,
    'database.server.id': String(opts.serverId),
    'database.ssl.mode': SSL_MODE[opts.flavour][opts.db.tls ? 'verify' : 'off'],
    ...(opts.db.tls &&
      opts.db.truststore !== undefined && {
        'database.ssl.truststore': opts.db.truststore.path,
        'database.ssl.truststore.password': opts.db.truststore.password,
      }),
    // MySQL's caching_sha2_password sends the password in the clear over TLS only; without TLS the
    // JDBC driver must fetch the server's RSA key to encrypt it, which it refuses unless allowed.
    // A connection succeeds without it only while the server still caches the account's hash
    // from an earlier login, so the connector fails after each MySQL restart (seen on 9.7).
    ...(opts.flavour === 'mysql' && !opts.db.tls && { 'driver.allowPublicKeyRetrieval': 'true' }),
    // After a database outage the binlog client reconnects only when its keepalive next looks:
    // at Debezium's default of a minute, capture and events resumed 60 to 95 s after the server
    // was back (test/integration/pipeline/two-databases.test.ts measured 73 s); every 5 s costs
    // a check of the client's state, not a query.
    'connect.keep.alive.interval.ms': '5000',
  };
}

type MappedTable = Readonly<{ entity: Entity; table: string }>;

/** The columns of an entity's table the CDC record must carry (core/bucket-entry.ts reads them; a digest's user column keys its reminders). */
export function capturedColumns(entity: Entity): string[] {
  const users = entity.transitions.flatMap((t) => (t.reminders?.digest ? [t.reminders.digest.userColumn] : []));
  return [...new Set([entity.idColumn, entity.status.column, ...entity.transitions.map((t) => t.due.column), ...users])];
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The filter first (it reads source.table, which routing leaves alone), then a router per table set. */
function transformConfig(tables: readonly MappedTable[], prefix: string, schema: string, warnings: string[]): Record<string, string> {
  const filter = filterConfig(tables, warnings);
  const routes: Record<string, string> = {};
  const names = ['onlyExpirable'];
  for (const entity of [...new Set(tables.map((t) => t.entity))]) {
    const own = tables.filter((t) => t.entity === entity).map((t) => t.table);
    if (own.length < 2) continue;
    const name = `route_${entity.name}`;
    names.push(name);
    const escape = (s: string) => s.replace(/[.]/g, '\\.');
    routes[`transforms.${name}.type`] = 'io.debezium.transforms.ByLogicalTableRouter';
    routes[`transforms.${name}.topic.regex`] = `${escape(prefix)}\\.${escape(schema)}\\.(${own.join('|')})`;
    routes[`transforms.${name}.topic.replacement`] = `${prefix}.${schema}.${entity.name}`;
    routes[`transforms.${name}.key.enforce.uniqueness`] = 'true';
  }
  return { transforms: names.join(','), ...filter, ...routes };
}

function filterConfig(tables: readonly MappedTable[], warnings: string[]): Record<string, string> {
  const rules: Record<string, string> = {};
  const listed: string[] = [];
  for (const { entity, table } of tables) {
    const states = dueStates(entity);
    const unlistable = states.filter((s) => s.includes(',') || s.trim() !== s || s.length === 0);
    if (unlistable.length > 0) {
      warnings.push(
        `${table}: status ${unlistable.map((s) => JSON.stringify(s)).join(', ')} cannot be listed in the filter; none of its changes is dropped at the source`,
      );
      continue;
    }
    listed.push(table);
    rules[`predicates.notExpirable.expirable.table.${table}.column`] = entity.status.column;
    rules[`predicates.notExpirable.expirable.table.${table}.states`] = states.join(',');
  }
  return {
    'transforms.onlyExpirable.type': 'org.apache.kafka.connect.transforms.Filter',
    'transforms.onlyExpirable.predicate': 'notExpirable',
    predicates: 'notExpirable',
    'predicates.notExpirable.type': 'timebucket.connect.NotExpirableChange',
    'predicates.notExpirable.expirable.unlisted': 'pass',
    'predicates.notExpirable.expirable.tables': listed.join(','),
    ...rules,
  };
}

/** Every state from which some transition of the entity may fire, as the predicate compares them (decimal text for codes). */
function dueStates(entity: Entity): string[] {
  return [...new Set(entity.transitions.flatMap((t) => t.from.map(String)))];
}

/**
 * Where the schema history lives, and of what: the captured databases' tables only. By default
 * Debezium's snapshot reads the structure of every database on the server, so a database dropped
 * (or renamed) elsewhere on it while the snapshot lists and reads them fails the snapshot with
 * "Unknown database" and kills the task for good (seen: another database of the same server
 * dropped during an outbox connector's first snapshot). A connector's databases are the entities
 * file's on that server: it never captures another (DBZ-6712 made the snapshot honour this).
 */
export function historyConfig(history: ConnectorConfigOptions['history']): Record<string, string> {
  const captured = { 'schema.history.internal.store.only.captured.databases.ddl': 'true' };
  if (history.kind === 'file') {
    return {
      'schema.history.internal': 'io.debezium.storage.file.history.FileSchemaHistory',
      'schema.history.internal.file.filename': history.path,
      ...captured,
    };
  }
  return {
    ...captured,
    'schema.history.internal': 'io.debezium.storage.kafka.history.KafkaSchemaHistory',
    'schema.history.internal.kafka.bootstrap.servers': history.brokers.join(','),
    'schema.history.internal.kafka.topic': history.topic,
    ...(history.security === undefined ? {} : historyClientSecurity(history.security)),
  };
}

const LOGIN_MODULE: Readonly<Record<NonNullable<HistorySecurity['sasl']>['mechanism'], string>> = {
  'scram-sha-512': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  'scram-sha-256': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  plain: 'org.apache.kafka.common.security.plain.PlainLoginModule',
};

/** The same settings for the history's producer and its consumer: both talk to the brokers. */
function historyClientSecurity(security: HistorySecurity): Record<string, string> {
  const client: Record<string, string> = { 'security.protocol': `${security.sasl === undefined ? '' : 'SASL_'}${security.tls ? 'SSL' : 'PLAINTEXT'}` };
  if (security.sasl !== undefined) {
    const { mechanism, username, password } = security.sasl;
    client['sasl.mechanism'] = mechanism.toUpperCase();
    client['sasl.jaas.config'] = `${LOGIN_MODULE[mechanism]} required username="${jaasQuoted(username)}" password="${jaasQuoted(password)}";`;
  }
  if (security.tls && security.ca !== undefined) {
    client['ssl.truststore.type'] = 'PEM';
    if ('pem' in security.ca) client['ssl.truststore.certificates'] = security.ca.pem.trim();
    else client['ssl.truststore.location'] = security.ca.file;
  }
  const out: Record<string, string> = {};
  for (const side of ['producer', 'consumer']) for (const [k, v] of Object.entries(client)) out[`schema.history.internal.${side}.${k}`] = v;
  return out;
}

/** JAAS quotes: a backslash or a double quote inside is escaped. */
const jaasQuoted = (s: string) => s.replace(/[\\"]/g, (c) => `\\${c}`);
