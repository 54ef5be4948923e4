/**
 * timebucket check [--connect-url URL] [--json]
 *
 * Everything `run` relies on that the database and Connect can tell, checked before a first
 * deployment and after every schema change, each problem named with its fix; exit 78 when there
 * is any (0 when there is none):
 *   - the server: the binlog on, binlog_format=ROW, binlog_row_image=FULL (MySQL 8 and MariaDB);
 *   - every mapped table: its columns exist with compatible types, every declared value fits, the
 *     indexes the statements force exist (else the CREATE INDEX to run); once they do, its data
 *     (db/check-entity-data.ts): a bounded sample of each due column is plausible for its kind,
 *     integer status codes are the table's, and the scanner's first pass would not transition
 *     most of it at once (what `run` refuses to start on);
 *   - the account it runs as (run it as the service's account): it holds what the service needs,
 *     and nothing more: each privilege wider than the file needs (globally, on the whole database,
 *     on a table or column it does not need) is a problem of its own, with the REVOKE to run;
 *   - given --connect-url: a RUNNING connector captures each mapped table, with the filter the
 *     entities file implies (its status column and every from-state); and (router mode) a
 *     RUNNING connector publishes each database's event_outbox through the Outbox Event Router.
 */
import type { Config } from '../config';
import { databasesOf, MAIN_DATABASE, unconfiguredDatabases, type EntityCatalogue } from '../core/entity-catalogue';
import { readEntitySchema, schemaNamesOf } from '../db/check-entity-schema';
import { entityDataProblems } from '../db/check-entity-data';
import { readScannedCursors } from '../db/sql/read-scanned-cursors';
import { entitySchemaProblems } from '../core/entity-schema-check';
import { createDb } from '../db/knex';
import { readServerSettings, ServerSettings, serverSettingProblems } from '../db/sql/read-server-settings';
import { TimebucketError } from '../core/errors';
import { currentAccount, readOwnPrivileges } from '../db/sql/read-own-privileges';
import { describeWider, missingPrivileges, revokeWider, widerPrivileges, type WiderPrivilege } from '../db/privilege-check';
import { mappedTableGrants, optionalGlobalGrants, OWN_TABLE_GRANTS } from '../db/service-grants';
import { connectorConfig } from '../ingest/connector-config';
import { connectorProblems, outboxConnectorProblems, ConnectorView } from '../ingest/connector-check';
import { connectorName } from '../ingest/connector-names';
import { outboxConnectorConfig, outboxTopicPrefix } from '../publish/outbox-connector-config';
import type { Logger } from '../ops/logger';
import type { SetupCommand } from './command-setup';

const EX_CONFIG = 78;

export function registerCheckCommand(program: SetupCommand): void {
  program
    .command('check')
    .description('check the database, the account and (with --connect-url) the connectors against the entities file')
    .option('--connect-url <url>', 'Kafka Connect REST API, to check the connectors too')
    .option('--json', 'print the result as one JSON object')
    .actionWith({ uses: ['db', 'entities'], logTo: 'stderr' }, async ({ config, catalogue, logger }, opts: { connectUrl?: string; json?: boolean }) => {
      const problems = unconfiguredDatabases(catalogue, config.databases);
      const connectors = opts.connectUrl === undefined ? undefined : await readConnectors(opts.connectUrl);
      // Each database on its own: its server, its tables, the account's grants there, its connector.
      const reports: DatabaseReport[] = [];
      const many = databasesOf(catalogue).length > 1;
      const scannedCursors = await readScannedCursorsOf(config, logger);
      for (const name of databasesOf(catalogue).filter((n) => config.databases[n] !== undefined)) {
        const report = await checkDatabase(config, catalogue, logger, name, connectors, scannedCursors);
        reports.push(report);
        problems.push(...report.problems.map((p) => (many ? `[${name}] ${p}` : p)));
      }
      if (opts.json === true) console.log(JSON.stringify(checkJson(config.db.database, reports, problems)));
      else for (const line of checkLines(catalogue.source, reports, problems)) console.log(line);
      if (problems.length > 0) process.exitCode = EX_CONFIG;
    });
}

type DatabaseReport = Readonly<{ name: string; database: string; server: ServerSettings; problems: string[] }>;

function checkJson(database: string, reports: readonly DatabaseReport[], problems: readonly string[]): Record<string, unknown> {
  const main = reports[0];
  return {
    server: main && { flavour: main.server.flavour, version: main.server.version },
    database,
    databases: reports.map((r) => ({ name: r.name, database: r.database, flavour: r.server.flavour, version: r.server.version })),
    problems,
  };
}

function checkLines(entities: string, reports: readonly DatabaseReport[], problems: readonly string[]): string[] {
  return [
    ...reports.map(
      (r) => `check: ${r.server.flavour} ${r.server.version}, database ${r.database}${r.name === MAIN_DATABASE ? '' : ` (${r.name})`}, entities ${entities}`,
    ),
    ...problems.map((p) => `problem: ${p}`),
    problems.length === 0 ? 'check: no problems' : `check: ${problems.length} problem(s)`,
  ];
}

/** The scanner's cursors live on the main database: which have completed a pass (core/first-pass-guard.ts). */
async function readScannedCursorsOf(config: Config, logger: Logger): Promise<ReadonlySet<string>> {
  if (config.firstPass.allowLarge) return new Set();
  const main = createDb(config.databases[MAIN_DATABASE]!, { logger });
  try {
    return await readScannedCursors(main);
  } finally {
    await main.destroy();
  }
}

async function checkDatabase(
  config: Config,
  catalogue: EntityCatalogue,
  logger: Logger,
  name: string,
  connectors: ConnectorView[] | undefined,
  scannedCursors: ReadonlySet<string>,
): Promise<DatabaseReport> {
  const target = config.databases[name]!;
  const database = target.database;
  const db = createDb(target, { logger });
  const problems: string[] = [];
  let server: ServerSettings;
  try {
    server = await readServerSettings(db);
    problems.push(...serverSettingProblems(server));
    const schema = await readEntitySchema({ [name]: db }, catalogue, name);
    const schemaProblems = entitySchemaProblems(catalogue, schema, schemaNamesOf(config.databases), name);
    problems.push(...schemaProblems);
    // The data's statements need the tables as the file says (columns, the forced indexes).
    if (schemaProblems.length === 0)
      problems.push(...(await entityDataProblems(db, catalogue, name, schemaNamesOf(config.databases), { firstPass: config.firstPass, scannedCursors })));
    const privileges = await readOwnPrivileges(db, database);
    const needed = [...mappedTableGrants(catalogue, schema, name), ...OWN_TABLE_GRANTS];
    const missing = missingPrivileges(needed, privileges, database);
    if (missing.length > 0) {
      problems.push(`the account ${target.user} lacks ${missing.join('; ')}: run \`timebucket migrate\` as the owner with TB_DB_SERVICE_USER=${target.user}`);
    }
    problems.push(...widerProblems(widerPrivileges(needed, privileges, database, optionalGlobalGrants(config.pacing)), await currentAccount(db)));
  } finally {
    await db.destroy();
  }
  if (connectors !== undefined) problems.push(...connectorsProblems(config, catalogue, name, server, connectors));
  return { name, database, server, problems };
}

/** Each privilege held beyond the file's needs, with the REVOKE to run (migrate revokes only what it granted itself). */
function widerProblems(wider: readonly WiderPrivilege[], account: string): string[] {
  return wider.map(
    (w) =>
      `the account ${account} holds ${describeWider(w)}, more than the entities file needs: revoke ${w.privileges.length > 1 ? 'them' : 'it'} (${revokeWider(w, account)})`,
  );
}

/** The database's two connectors as Connect runs them against what the entities file implies (the CDC one's filter, the outbox router). */
function connectorsProblems(config: Config, catalogue: EntityCatalogue, name: string, server: ServerSettings, connectors: ConnectorView[]): string[] {
  const target = config.databases[name]!;
  const database = target.database;
  const db = { host: target.host, port: target.port, database, user: '', password: '', tls: target.tls.enabled };
  const wanted = connectorConfig(catalogue, {
    name: 'timebucket-cdc',
    database: name,
    flavour: server.flavour,
    db,
    topicPrefix: target.cdcTopicPrefix,
    serverId: 1,
    history: { kind: 'file', path: '' },
    topics: { partitions: config.cdc.partitions, replicationFactor: 1, retentionMs: config.cdc.retentionMs },
  });
  const outbox = outboxConnectorConfig({
    name: connectorName(config.groupPrefix, 'outbox', name),
    flavour: server.flavour,
    db,
    topicPrefix: outboxTopicPrefix(target.cdcTopicPrefix),
    serverId: 1,
    history: { kind: 'file', path: '' },
  });
  return [...connectorProblems(wanted.config, connectors, database), ...outboxConnectorProblems(outbox.config, connectors, database, name)];
}

async function readConnectors(baseUrl: string): Promise<ConnectorView[]> {
  const url = `${baseUrl.replace(/\/+$/, '')}/connectors?expand=info&expand=status`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  } catch (cause) {
    throw new TimebucketError('CONNECT_UNAVAILABLE', `cannot reach Kafka Connect at ${baseUrl}`, { retriable: true, cause });
  }
  if (!res.ok) throw new TimebucketError('CONNECT_UNAVAILABLE', `GET ${url}: HTTP ${res.status}`, { retriable: res.status >= 500 });
  const body = (await res.json()) as Record<
    string,
    { info?: { config?: Record<string, string> }; status?: { connector?: { state?: string }; tasks?: Array<{ state?: string }> } }
  >;
  return Object.entries(body).map(([name, c]) => ({
    name,
    config: c.info?.config ?? {},
    state: c.status?.connector?.state ?? 'UNKNOWN',
    taskStates: (c.status?.tasks ?? []).map((t) => t.state ?? 'UNKNOWN'),
  }));
}
