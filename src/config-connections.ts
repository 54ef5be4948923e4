/**
 * The connections a configuration describes: TLS and its CA, SASL credentials, the registry's
 * URL and basic auth, the databases of TB_DATABASES, the service account `migrate` grants.
 * Each reader adds what is wrong to `problems`, so loadConfig reports them all at once.
 */
import { readFileSync } from 'node:fs';
import { splitList, type ParsedEnv } from './config-schema';

/** TLS to the database or the brokers; ca is the PEM text of the CA file (undefined: the system's CAs). */
export type Tls = Readonly<{ enabled: false }> | Readonly<{ enabled: true; ca: string | undefined }>;
export type KafkaSasl = Readonly<{ mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain'; username: string; password: string }>;
export type BasicAuth = Readonly<{ username: string; password: string }>;

/**
 * statementTimeoutMs: every statement's deadline (db/statement-deadline.ts); migrateStatementTimeoutMs
 * that of migrate's DDL; lockWaitTimeoutS: the sessions' innodb_lock_wait_timeout, below the deadline.
 */
export type DbConnection = Readonly<{
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  poolMax: number;
  tls: Tls;
  statementTimeoutMs: number;
  migrateStatementTimeoutMs: number;
  lockWaitTimeoutS: number;
}>;
/** A database an entity may live on: its connection and the topic prefix of its CDC connector. */
export type NamedDatabase = DbConnection & Readonly<{ name: string; cdcTopicPrefix: string }>;

/**
 * TB_DATABASES' connections: TB_DB_<N>_HOST required in production (locally 127.0.0.1, port the
 * stack's second server); name, user and password default to the main database's.
 */
export function extraDatabasesOf(
  env: Record<string, string | undefined>,
  e: ParsedEnv,
  usesDb: boolean,
  problems: string[],
): Array<Omit<NamedDatabase, 'poolMax' | 'tls' | 'statementTimeoutMs' | 'migrateStatementTimeoutMs' | 'lockWaitTimeoutS'>> {
  return splitList(e.TB_DATABASES).map((name) => {
    const v = (suffix: string) => env[`TB_DB_${name.toUpperCase()}_${suffix}`];
    const at = (suffix: string) => `TB_DB_${name.toUpperCase()}_${suffix}`;
    if (e.TB_ENV === 'production' && usesDb && !v('HOST')) problems.push(`${at('HOST')}: required when TB_ENV=production for database ${name} (TB_DATABASES)`);
    const portText = v('PORT');
    const portValue = portText === undefined ? (e.TB_ENV === 'production' ? 3306 : e.TB_STACK_DB2_PORT) : Number(portText);
    if (!Number.isInteger(portValue) || portValue < 1 || portValue > 65535) problems.push(`${at('PORT')}: not a port: ${JSON.stringify(portText)}`);
    const schema = v('NAME') ?? e.TB_DB_NAME;
    if (!/^[A-Za-z0-9_]+$/.test(schema)) problems.push(`${at('NAME')}: letters, digits and _ only`);
    const prefix = v('CDC_TOPIC_PREFIX') ?? `${e.TB_CDC_TOPIC_PREFIX}_${name}`;
    if (!/^[A-Za-z0-9._-]+$/.test(prefix)) problems.push(`${at('CDC_TOPIC_PREFIX')}: letters, digits, '.', '_' and '-' only`);
    return {
      name,
      host: v('HOST') ?? '127.0.0.1',
      port: portValue,
      database: schema,
      user: v('USER') ?? e.TB_DB_USER,
      password: v('PASSWORD') ?? e.TB_DB_PASSWORD,
      cdcTopicPrefix: prefix,
    };
  });
}

export function serviceAccount(value: string | undefined): { user: string; host: string } | undefined {
  if (value === undefined) return undefined;
  const [user, host] = value.split('@');
  return { user: user!, host: host ?? '%' };
}

/**
 * TLS on or off, and the CA it trusts. A CA file without TLS on is a problem (it would be ignored),
 * as is one that cannot be read; undefined only when there are problems.
 */
export function tlsOf(env: Record<string, string | undefined>, switchName: string, caName: string, problems: string[]): Tls | undefined {
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

export function saslProblems(env: Record<string, string | undefined>): string[] {
  const mechanism = env['TB_KAFKA_SASL_MECHANISM'];
  if (mechanism === undefined) {
    return SASL_CREDENTIALS.filter((n) => env[n] !== undefined).map(
      (n) => `${n}: set TB_KAFKA_SASL_MECHANISM too (credentials without a mechanism would be ignored)`,
    );
  }
  const problems = SASL_CREDENTIALS.filter((n) => !env[n]).map((n) => `${n}: required with TB_KAFKA_SASL_MECHANISM (or ${n}_FILE)`);
  // PLAIN sends the password as it is: only inside TLS.
  if (mechanism === 'plain' && env['TB_KAFKA_SSL'] !== 'on') problems.push('TB_KAFKA_SASL_MECHANISM: plain sends the password in clear; set TB_KAFKA_SSL=on');
  return problems;
}

/**
 * The registry URL without credentials, and the basic-auth credentials from the URL's user info
 * or TB_REGISTRY_USERNAME/PASSWORD (not both). The URL itself may be missing (the default applies).
 */
export function registryOf(env: Record<string, string | undefined>, problems: string[]): { url: string | undefined; auth: BasicAuth | undefined } | undefined {
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
    problems.push(
      `${username === undefined ? 'TB_REGISTRY_USERNAME' : 'TB_REGISTRY_PASSWORD'}: required with ${username === undefined ? 'TB_REGISTRY_PASSWORD' : 'TB_REGISTRY_USERNAME'}`,
    );
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
