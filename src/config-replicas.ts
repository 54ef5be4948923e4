/**
 * The replicas whose lag the service reads (db/replica-heartbeat.ts): at most one per database,
 * configured by TB_DB_REPLICA_* for the main database and TB_DB_<N>_REPLICA_* for each database
 * of TB_DATABASES: _HOST, _PORT, _USER, _PASSWORD (_USER_FILE, _PASSWORD_FILE too). A database
 * has a replica when its _HOST or _PORT is set; none by default. TLS, the schema name and the
 * statement deadline are the database's own (the replica holds the same schema).
 *
 * The account is the replica reader's, not the service's: it needs SELECT on
 * timebucket_heartbeat alone, which `timebucket migrate` grants it on the primary (the grant
 * replicates). Locally it defaults to the stack's reader (stack/env.sh TB_STACK_REPLICA_READER_USER)
 * on the stack's replica port; in production _HOST, _USER and _PASSWORD are required.
 */
import type { ParsedEnv } from './config-schema';
import type { DbConnection, NamedDatabase } from './config-connections';

const ACCOUNT = /^[A-Za-z0-9_.-]+$/;

/** The replica settings' prefix for a database: TB_DB_REPLICA_ (main) or TB_DB_<N>_REPLICA_. */
export function replicaPrefix(database: string): string {
  return database === 'main' ? 'TB_DB_REPLICA_' : `TB_DB_${database.toUpperCase()}_REPLICA_`;
}

/** The replica of each database that has one, by database name. */
export function replicasOf(
  env: Record<string, string | undefined>,
  e: ParsedEnv,
  databases: Readonly<Record<string, NamedDatabase>>,
  problems: string[],
): Record<string, DbConnection> {
  const out: Record<string, DbConnection> = {};
  for (const [name, primary] of Object.entries(databases)) {
    const at = (suffix: string) => `${replicaPrefix(name)}${suffix}`;
    const v = (suffix: string) => env[at(suffix)];
    if (v('HOST') === undefined && v('PORT') === undefined) continue;
    const production = e.TB_ENV === 'production';
    for (const s of ['HOST', 'USER', 'PASSWORD'])
      if (production && !v(s)) problems.push(`${at(s)}: required when TB_ENV=production for a replica of database ${name}`);
    const portText = v('PORT');
    const port = portText === undefined ? (production ? 3306 : e.TB_STACK_REPLICA_PORT) : Number(portText);
    if (!Number.isInteger(port) || port < 1 || port > 65535) problems.push(`${at('PORT')}: not a port: ${JSON.stringify(portText)}`);
    const user = v('USER') ?? env['TB_STACK_REPLICA_READER_USER'] ?? 'timebucket_replica_reader';
    // `migrate` grants it by name (db/sql/grant-heartbeat-reader.ts).
    if (!ACCOUNT.test(user)) problems.push(`${at('USER')}: letters, digits and _.- only`);
    out[name] = {
      database: primary.database,
      tls: primary.tls,
      statementTimeoutMs: primary.statementTimeoutMs,
      migrateStatementTimeoutMs: primary.migrateStatementTimeoutMs,
      lockWaitTimeoutS: primary.lockWaitTimeoutS,
      host: v('HOST') ?? '127.0.0.1',
      port,
      user,
      password: v('PASSWORD') ?? env['TB_STACK_REPLICA_READER_PASSWORD'] ?? '',
      // One read at a time per replica.
      poolMax: 2,
    };
  }
  return out;
}
