/**
 * timebucket as a deployment connects: Kafka over SASL_SSL (SCRAM-SHA-512, the broker's
 * certificate verified against the stack's CA), the database over TLS (MariaDB or MySQL; as an account the server
 * admits over TLS only), the schema registry with basic auth, secrets from files as Kubernetes
 * mounts them. The stack's SASL_SSL listener is the only one `run` is given, so nothing can go
 * around it. Then each way it can be wrong fails start-up with a message that says what to
 * check, and never repeats the secret.
 *
 * @mysql
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, Db } from '../../../src/db/knex';
import { config, uniqueName } from '../../support/stack';
import { createTestPipeline, TestPipeline } from '../../support/pipeline';
import { CliRun, freePort, killRunning, outputLines, spawnCli } from '../../support/cli';
import { BasicAuthProxy, startBasicAuthProxy } from '../../support/basic-auth-proxy';
import { waitFor, withTimeout } from '../../support/wait-for';
import { startConsumer } from '../../support/example-consumer';

const stack = {
  saslBrokers: process.env['TB_STACK_KAFKA_SASL_BROKERS'] ?? '127.0.0.1:19094',
  saslUser: process.env['TB_STACK_KAFKA_SASL_USER'] ?? 'timebucket',
  saslPassword: process.env['TB_STACK_KAFKA_SASL_PASSWORD'] ?? 'kafka-pw-Hq4rX8mN',
  caFile: join(process.env['TB_STACK_TLS_DIR'] ?? join(__dirname, '../../../.stack/tls'), 'ca.pem'),
  dbTlsUser: process.env['TB_STACK_DB_TLS_USER'] ?? 'timebucket_tls',
  dbTlsPassword: process.env['TB_STACK_DB_TLS_PASSWORD'] ?? 'tls-pw-Vb6pK2sW',
};
const registryUser = 'tb-registry';
const registryPassword = 'reg-pw-Zt5mQ1cX';

let pipeline: TestPipeline;
let proxy: BasicAuthProxy;
let owner: Db;
const secrets = mkdtempSync(join(tmpdir(), 'tb-secrets-'));
const runs: CliRun[] = [];

/** A secret as Kubernetes mounts it: a file of its own, with a trailing newline. */
function secretFile(name: string, value: string): string {
  const path = join(secrets, name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return path;
}

/** Every connection secured; the passwords of Kafka and the registry from files. */
function secureEnv(): Record<string, string> {
  return {
    ...pipeline.env,
    TB_KAFKA_BROKERS: stack.saslBrokers,
    TB_KAFKA_SSL: 'on',
    TB_KAFKA_SSL_CA_FILE: stack.caFile,
    TB_KAFKA_SASL_MECHANISM: 'scram-sha-512',
    TB_KAFKA_SASL_USERNAME: stack.saslUser,
    TB_KAFKA_SASL_PASSWORD_FILE: secretFile('kafka-password', stack.saslPassword),
    TB_DB_TLS: 'on',
    TB_DB_TLS_CA_FILE: stack.caFile,
    TB_DB_USER: stack.dbTlsUser,
    TB_DB_PASSWORD: stack.dbTlsPassword,
    TB_REGISTRY_URL: proxy.url,
    TB_REGISTRY_USERNAME: registryUser,
    TB_REGISTRY_PASSWORD_FILE: secretFile('registry-password', registryPassword),
  };
}

beforeAll(async () => {
  pipeline = await createTestPipeline();
  proxy = await startBasicAuthProxy(config.registry.url, { username: registryUser, password: registryPassword });
  owner = createDb(config.db);
});

afterAll(async () => {
  killRunning(runs);
  await proxy?.close();
  await owner?.destroy();
});

const passwords = [stack.saslPassword, stack.dbTlsPassword, registryPassword];

function start(args: string[], env: Record<string, string>): CliRun {
  const r = spawnCli(args, env);
  runs.push(r);
  return r;
}

test('schemas register over registry basic auth and database TLS, then run over SASL_SSL and database TLS: a coupon expires, and the example consumer reads its event over SASL_SSL', async () => {
  const env = secureEnv();
  // The deployment step: the ids saved for this registry URL, the one `run` reads them under.
  const register = start(['schemas', 'register'], env);
  expect(await withTimeout('schemas register', register.exited, 60_000)).toEqual({ code: 0, signal: null });
  expect(proxy.counts().forwarded).toBeGreaterThan(0);
  const port = await freePort();
  const run = start(['run'], { ...env, TB_LOG_LEVEL: 'debug', TB_HTTP_PORT: String(port), TB_INSTANCE_ID: uniqueName('secure') });
  await waitFor('timebucket run to be ready', async () => ((await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok ? true : undefined), {
    timeoutMs: 90_000,
  });

  // Read back as a consuming team would: over SASL_SSL, decoding through the registry with basic auth.
  const events: Array<{ headers: Record<string, string>; value: Record<string, unknown> }> = [];
  const stopConsumer = await startConsumer({
    brokers: stack.saslBrokers.split(','),
    registryUrl: proxy.url,
    topics: pipeline.topology.events.filter((e) => e.type === 'COUPON_EXPIRED').map((e) => e.topic),
    groupId: uniqueName('secure-consumer'),
    ssl: { ca: [readFileSync(stack.caFile, 'utf8')] },
    sasl: { mechanism: 'scram-sha-512', username: stack.saslUser, password: stack.saslPassword },
    registryAuth: { username: registryUser, password: registryPassword },
    onEvent: (e) => void events.push(e),
  });
  try {
    const [id] = await owner('coupons').insert({ user_id: 7, status: 'ACTIVE', expire_time: owner.raw('NOW(3) + INTERVAL 2 SECOND') });
    await waitFor('the coupon to expire', async () => ((await owner('coupons').where({ id }).first())?.status === 'EXPIRED' ? true : undefined), {
      timeoutMs: 60_000,
    });
    const event = await waitFor('its event, over SASL_SSL', async () => events.find((e) => String(e.value['coupon_id']) === String(id)), { timeoutMs: 30_000 });
    expect(event.headers).toMatchObject({ ce_type: 'timebucket.coupon.expired', ce_subject: String(id) });
  } finally {
    await stopConsumer();
  }

  run.child.kill('SIGTERM');
  expect(await withTimeout('run to stop', run.exited, 30_000)).toEqual({ code: 0, signal: null });
  // The registry was reached with the credentials only: nothing went unauthenticated.
  expect(proxy.counts().forwarded).toBeGreaterThan(0);
  expect(proxy.counts().refused).toBe(0);
  const lines = outputLines(run);
  expect(lines.length).toBeGreaterThan(5);
  for (const p of passwords) expect(lines.filter((l) => l.includes(p))).toEqual([]);
});

test('a wrong Kafka password stops run at start-up, saying to check the SASL settings, without repeating it', async () => {
  const wrong = 'wrong-kafka-pw-8dLq';
  const run = start(['run'], {
    ...secureEnv(),
    TB_KAFKA_SASL_PASSWORD_FILE: secretFile('wrong-kafka-password', wrong),
    TB_LOG_LEVEL: 'debug',
    TB_HTTP_PORT: '0',
  });
  expect(await withTimeout('run to fail', run.exited, 60_000)).toEqual({ code: 1, signal: null });
  expect(run.stderr()).toMatch(/SASL SCRAM SHA512 authentication failed/);
  expect(run.stderr()).toMatch(/hint: Kafka refused the SASL credentials: check TB_KAFKA_SASL_USERNAME, TB_KAFKA_SASL_PASSWORD/);
  expect(outputLines(run).filter((l) => l.includes(wrong))).toEqual([]);
});

test('a broker certificate from a CA not given is refused: TLS verifies the broker, and the hint names TB_KAFKA_SSL_CA_FILE', async () => {
  const env = secureEnv();
  delete env['TB_KAFKA_SSL_CA_FILE'];
  const topics = start(['topics', 'apply'], { ...env, TB_KAFKA_RETRIES: '0' });
  expect(await withTimeout('topics apply to fail', topics.exited, 60_000)).toMatchObject({ code: 1 });
  expect(topics.stderr()).toMatch(/self-signed certificate in certificate chain/);
  expect(topics.stderr()).toMatch(/hint: the brokers' certificate is not trusted: set TB_KAFKA_SSL_CA_FILE/);
});

test('the database account that requires TLS is refused without it; with TLS, the server certificate must be trusted', async () => {
  const withoutTls = secureEnv();
  delete withoutTls['TB_DB_TLS_CA_FILE'];
  const plain = start(['migrate'], { ...withoutTls, TB_DB_TLS: 'off' });
  expect(await withTimeout('migrate without TLS to fail', plain.exited, 60_000)).toEqual({ code: 1, signal: null });
  expect(plain.stderr()).toMatch(/Access denied for user 'timebucket_tls'/);
  expect(plain.stderr()).toMatch(/hint: the database refused the login: .*TB_DB_TLS/);

  const env = secureEnv();
  delete env['TB_DB_TLS_CA_FILE'];
  const untrusted = start(['migrate'], env);
  expect(await withTimeout('migrate with an untrusted certificate to fail', untrusted.exited, 60_000)).toEqual({ code: 1, signal: null });
  expect(untrusted.stderr()).toMatch(/self-signed certificate in certificate chain/);
  expect(untrusted.stderr()).toMatch(/hint: the database's certificate is not trusted: set TB_DB_TLS_CA_FILE/);

  const trusted = start(['migrate'], secureEnv());
  expect(await withTimeout('migrate over TLS', trusted.exited, 60_000)).toEqual({ code: 0, signal: null });
});

test('a wrong registry password fails schemas register at once, with the registry named in the hint', async () => {
  const wrong = 'wrong-reg-pw-4hNs';
  const refusedBefore = proxy.counts().refused;
  const run = start(['schemas', 'register'], { ...secureEnv(), TB_REGISTRY_PASSWORD_FILE: secretFile('wrong-registry-password', wrong) });
  expect(await withTimeout('schemas register to fail', run.exited, 60_000)).toEqual({ code: 1, signal: null });
  expect(proxy.counts().refused).toBeGreaterThan(refusedBefore);
  expect(run.stderr()).toMatch(/HTTP 401/);
  expect(run.stderr()).toMatch(/hint: the schema registry refused the request: check TB_REGISTRY_USERNAME and TB_REGISTRY_PASSWORD/);
  expect(outputLines(run).filter((l) => l.includes(wrong))).toEqual([]);
});
