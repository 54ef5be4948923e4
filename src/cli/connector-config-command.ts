/**
 * timebucket connector config [--database D] [--name N] [--server-id N] [--flavour auto|mariadb|mysql]
 *   [--history kafka|file:<path>] [--replication-factor N] [--db-user U] [--db-password P] [--config-only] [--outbox]
 *   [--kafka-user U] [--kafka-password P] [--kafka-ca-file F] [--format rest|strimzi] [--strimzi-cluster C]
 *
 * With --outbox: the database's event_outbox connector (publish/outbox-connector-config.ts),
 * Debezium's Outbox Event Router, which publishes every event.
 * Prints the Debezium connector for the tables the entities file maps, as JSON for Kafka
 * Connect's REST API: `{ name, config }` for POST /connectors, or with --config-only the map
 * for PUT /connectors/<name>/config (idempotent: what the local stack does). Warnings go to
 * stderr. The database user and password default to Connect config-provider references, so
 * the printed JSON holds no secret: the Connect worker resolves them (FileConfigProvider).
 * One connector per database: --database names one of the entities file's (default main), whose
 * connection (TB_DB_* or TB_DB_<NAME>_*) gives the host, schema and topic prefix. Its name and
 * binlog server id are derived from the deployment (ingest/connector-names.ts), so two
 * deployments on one Connect cluster or one database server never replace or kick each other's.
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Config, NamedDatabase } from '../config';
import { ConfigError } from '../core/errors';
import { createDb } from '../db/knex';
import { serverFlavour } from '../db/sql/server-flavour';
import { connectorConfig, ConnectorConfigOptions, truststoreWarnings, type HistorySecurity, ServerFlavour } from '../ingest/connector-config';
import { outboxConnectorConfig, outboxTopicPrefix } from '../publish/outbox-connector-config';
import type { Setup, SetupCommand } from './command-setup';
import type { Logger } from '../ops/logger';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { stringify as stringifyYaml } from 'yaml';
import { strimziConnector } from '../ingest/strimzi-connector';
import { connectorName, derivedServerId } from '../ingest/connector-names';

type Opts = {
  database: string;
  name?: string;
  serverId?: number;
  flavour: 'auto' | ServerFlavour;
  history: string;
  replicationFactor: number;
  dbUser: string;
  dbPassword: string;
  dbTruststore?: string;
  dbTruststorePassword: string;
  configOnly?: boolean;
  outbox?: boolean;
  kafkaUser: string;
  kafkaPassword: string;
  kafkaCaFile?: string;
  format: 'rest' | 'strimzi';
  strimziCluster?: string;
};

const SECRETS = '/etc/kafka-connect/secrets/timebucket-cdc.properties';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function historyArg(value: string): string {
  if (value !== 'kafka' && !/^file:.+/.test(value)) throw new InvalidArgumentError("expected 'kafka' or 'file:<path>'");
  return value;
}

/**
 * The schema history's Kafka clients reach the brokers as the service does (TB_KAFKA_SSL,
 * TB_KAFKA_SASL_*), with the Connect side's account and CA path; none on a plaintext cluster.
 */
function historySecurity(config: Config, opts: Opts): HistorySecurity | undefined {
  const { ssl, sasl } = config.kafka;
  if (!ssl.enabled && sasl === undefined) return undefined;
  const pem = ssl.enabled ? ssl.ca : undefined;
  const ca = opts.kafkaCaFile !== undefined ? { file: opts.kafkaCaFile } : pem !== undefined ? { pem } : undefined;
  return {
    tls: ssl.enabled,
    ...(ca !== undefined && { ca }),
    ...(sasl !== undefined && { sasl: { mechanism: sasl.mechanism, username: opts.kafkaUser, password: opts.kafkaPassword } }),
  };
}

/** The REST API's JSON (`{ name, config }`, or the map alone), or a Strimzi KafkaConnector as YAML. */
function print(opts: Opts, groupPrefix: string, name: string, config: Readonly<Record<string, string>>): void {
  if (opts.format === 'strimzi') {
    console.log(stringifyYaml(strimziConnector(name, config, opts.strimziCluster ?? `${groupPrefix}-connect`)).trimEnd());
    return;
  }
  console.log(JSON.stringify(opts.configOnly === true ? config : { name, config }, null, 2));
}

export function registerConnectorCommands(program: SetupCommand): void {
  program
    .command('connector')
    .description('the Debezium connector for the mapped tables')
    .command('config')
    .description('print the connector configuration as JSON for the Kafka Connect REST API')
    .option('--database <name>', "the entities file's database whose tables it captures", 'main')
    .option('--name <name>', 'connector name (default: <TB_GROUP_PREFIX>-cdc or -outbox, then -<database> but for main)')
    .option(
      '--server-id <n>',
      "binlog client id, unique among the server's readers (default: derived from TB_GROUP_PREFIX, the schema and the kind)",
      positiveInt,
    )
    .addOption(new Option('--flavour <server>', 'the database server (auto: ask it)').choices(['auto', 'mariadb', 'mysql']).default('auto'))
    .option('--history <where>', "schema history: 'kafka' (a topic) or 'file:<path>'", historyArg, 'kafka')
    .option('--replication-factor <n>', 'replication factor of the CDC topics the connector creates', positiveInt, 3)
    .option('--db-user <user>', 'the connector database user (or a config-provider reference)', `\${file:${SECRETS}:user}`)
    .option('--db-password <password>', 'its password (or a config-provider reference)', `\${file:${SECRETS}:password}`)
    .option(
      '--kafka-user <user>',
      "the schema history's Kafka account with TB_KAFKA_SASL_* set (or a config-provider reference)",
      `\${file:${SECRETS}:kafka_user}`,
    )
    .option('--kafka-password <password>', 'its password (or a config-provider reference)', `\${file:${SECRETS}:kafka_password}`)
    .option(
      '--db-truststore <path>',
      "with the database's TLS on: a JKS or PKCS12 truststore on the Connect workers with the CA of its certificate (default: the workers' JVM truststore, public CAs only)",
    )
    .option('--db-truststore-password <password>', 'its password (or a config-provider reference)', `\${file:${SECRETS}:db_truststore_password}`)
    .option(
      '--kafka-ca-file <path>',
      "with TB_KAFKA_SSL: a CA file (PEM) on the Connect workers for the schema history's Kafka clients (default: TB_KAFKA_SSL_CA_FILE's certificates, in the configuration)",
    )
    .option('--config-only', 'print only the config map (for PUT /connectors/<name>/config)')
    .addOption(
      new Option('--format <format>', 'rest: JSON for the Connect REST API; strimzi: a KafkaConnector resource (YAML)')
        .choices(['rest', 'strimzi'])
        .default('rest'),
    )
    .option(
      '--strimzi-cluster <name>',
      'with --format strimzi: the KafkaConnect resource it runs on (its strimzi.io/cluster label; default <TB_GROUP_PREFIX>-connect)',
    )
    .option('--outbox', "the database's event_outbox connector instead (Debezium's Outbox Event Router publishes the events)")
    // The database for its flavour (unless --flavour), Kafka for the schema-history topic's brokers.
    .actionWith({ uses: ['db', 'kafka', 'entities'], logTo: 'stderr' }, (setup, opts: Opts) => printConnector(setup, opts));
}

async function printConnector({ config, catalogue, logger }: Setup<'db' | 'kafka' | 'entities'>, opts: Opts): Promise<void> {
  const target = capturedDatabase(config, catalogue, opts.database);
  const kind = opts.outbox === true ? 'outbox' : 'cdc';
  const name = opts.name ?? connectorName(config.groupPrefix, kind, opts.database);
  const flavour = opts.flavour === 'auto' ? await askFlavour(target, logger) : opts.flavour;
  const history = historyOf(config, target, opts);
  // Two databases may be schemas of one server, and two deployments may read one server:
  // every binlog reader needs an id of its own (a second one with the same id kicks the first).
  const serverId = opts.serverId ?? derivedServerId(config.groupPrefix, kind, target.database);
  const truststore = opts.dbTruststore === undefined ? undefined : { path: opts.dbTruststore, password: opts.dbTruststorePassword };
  const db = {
    host: target.host,
    port: target.port,
    database: target.database,
    user: opts.dbUser,
    password: opts.dbPassword,
    tls: target.tls.enabled,
    ...(truststore && { truststore }),
  };
  if (opts.outbox === true) {
    for (const w of truststoreWarnings(db)) console.error(`warning: ${w}`);
    const out = outboxConnectorConfig({ name, flavour, db, topicPrefix: outboxTopicPrefix(target.cdcTopicPrefix), serverId, history });
    print(opts, config.groupPrefix, out.name, out.config);
    return;
  }
  const out = connectorConfig(catalogue, {
    name,
    database: opts.database,
    flavour,
    db,
    topicPrefix: target.cdcTopicPrefix,
    serverId,
    history,
    topics: { partitions: config.cdc.partitions, replicationFactor: opts.replicationFactor, retentionMs: config.cdc.retentionMs },
  });
  for (const w of out.warnings) console.error(`warning: ${w}`);
  print(opts, config.groupPrefix, out.name, out.config);
}

/** Only a database holding mapped tables: an empty table.include.list means "every table" to Debezium. */
function capturedDatabase(config: Config, catalogue: EntityCatalogue, database: string): NamedDatabase {
  const target = config.databases[database];
  const holding = [...new Set(catalogue.entities.flatMap((e) => e.databases))];
  if (target === undefined || !holding.includes(database)) {
    throw new ConfigError(
      `--database ${database}: no table of ${catalogue.source} lives there, or it is not configured in TB_DATABASES (databases with tables: ${holding.join(', ')})`,
      { problems: ['--database'] },
    );
  }
  return target;
}

async function askFlavour(target: NamedDatabase, logger: Logger): Promise<ServerFlavour> {
  const db = createDb(target, { logger });
  try {
    return (await serverFlavour(db)).flavour;
  } finally {
    await db.destroy();
  }
}

function historyOf(config: Config, target: NamedDatabase, opts: Opts): ConnectorConfigOptions['history'] {
  if (opts.history !== 'kafka') return { kind: 'file', path: opts.history.slice('file:'.length) };
  return {
    kind: 'kafka',
    brokers: config.kafka.brokers,
    topic: `${target.cdcTopicPrefix}.schema-history.${opts.outbox === true ? 'outbox.' : ''}${target.database}`,
    security: historySecurity(config, opts),
  };
}
