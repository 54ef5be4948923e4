/**
 * The connector `timebucket connector config` prints for a database reached over TLS
 * (TB_DB_TLS=on), registered as printed: it verifies the server's certificate and host name
 * (verify-full on MariaDB, verify_identity on MySQL), against the truststore given with --db-truststore (a PKCS12 file on the Connect
 * worker holding the stack's CA), and captures. Without one it verifies against the worker's
 * JVM truststore, which does not hold the stack's CA: the printed warning says so, and Connect
 * refuses the connector when it is registered rather than connect unverified.
 *
 * @lane isolated
 * @mysql
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin } from 'kafkajs';
import { createKafka } from '../../../src/kafka/client';
import { config, logger, uniqueName } from '../../support/stack';
import { spawnCli } from '../../support/cli';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { deleteConnector, putConnector } from '../../support/test-connector';
import { waitFor, withTimeout } from '../../support/wait-for';
import { stackFlavour, verifyingSslMode } from '../../support/stack-flavour';

const caFile = join(process.env['TB_STACK_TLS_DIR'] ?? join(__dirname, '../../../.stack/tls'), 'ca.pem');
const connectUrl = `http://127.0.0.1:${process.env['TB_CONNECT_PORT'] ?? '18083'}`;
const storePassword = 'truststore-pw-Lm3vQ8';

let testDb: TestDatabase;
let admin: Admin;
let dir: string;
const names: string[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase('cdc_db_tls');
  admin = createKafka(config.kafka, logger, '-test-db-tls').admin();
  await admin.connect();
  dir = mkdtempSync(join(tmpdir(), 'tb-db-tls-'));
});

afterAll(async () => {
  for (const name of names) await deleteConnector(name);
  const prefixes = names.map((n) => `${n.replace(/-/g, '')}.`);
  await admin?.deleteTopics({ topics: (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(p))) }).catch(() => undefined);
  await admin?.disconnect();
  await testDb?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const records = async (topic: string) => (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);

/** The connector as printed for the test database over TLS, and the command's stderr. */
async function printed(name: string, extra: string[]): Promise<{ config: Record<string, string>; stderr: string }> {
  const run = spawnCli(
    ['connector', 'config', '--config-only', '--flavour', 'auto', '--name', name, '--server-id', String(300_000 + Math.floor(Math.random() * 1_000_000))]
      .concat(['--db-user', process.env['TB_CDC_USER'] ?? 'debezium', '--db-password', process.env['TB_CDC_PASSWORD'] ?? 'debezium'])
      .concat(extra),
    { TB_DB_NAME: testDb.name, TB_DB_TLS: 'on', TB_DB_TLS_CA_FILE: caFile, TB_CDC_TOPIC_PREFIX: name.replace(/-/g, ''), TB_LOG_LEVEL: 'warn' },
  );
  const exit = await withTimeout('connector config to exit', run.exited, 30_000);
  expect({ ...exit, stderr: exit.code === 0 ? '' : run.stderr() }).toEqual({ code: 0, signal: null, stderr: '' });
  return { config: JSON.parse(run.stdout()) as Record<string, string>, stderr: run.stderr() };
}

test('with --db-truststore the printed connector verifies the database certificate against it and captures', async () => {
  const store = join(dir, 'db-ca.p12');
  execFileSync(
    'keytool',
    ['-importcert', '-noprompt', '-alias', 'stack-ca', '-file', caFile, '-keystore', store, '-storetype', 'PKCS12', '-storepass', storePassword],
    { stdio: 'pipe' },
  );
  const name = uniqueName('tb-cdc-dbtls');
  names.push(name);
  const { config: generated, stderr } = await printed(name, ['--db-truststore', store, '--db-truststore-password', storePassword]);
  expect(generated).toMatchObject({
    'database.ssl.mode': verifyingSslMode(),
    'database.ssl.truststore': store,
    'database.ssl.truststore.password': storePassword,
  });
  expect(stderr).not.toMatch(/JVM truststore/);

  await putConnector(name, { ...generated, 'topic.creation.default.replication.factor': '1' });
  await testDb.db('coupons').insert({ user_id: 1, status: 'ACTIVE', expire_time: testDb.db.raw('NOW(3) + INTERVAL 1 HOUR') });
  const cdc = `${name.replace(/-/g, '')}.${testDb.name}.coupons`;
  await waitFor(
    'the change captured over verified TLS',
    async () => ((await admin.listTopics()).includes(cdc) && (await records(cdc)) > 0 ? true : undefined),
    { timeoutMs: 90_000, intervalMs: 500 },
  );
});

test("without one, the warning says the JVM truststore is used, and Connect refuses the connector rather than trust the stack's certificate", async () => {
  const name = uniqueName('tb-cdc-dbtls-jvm');
  names.push(name);
  const { config: generated, stderr } = await printed(name, []);
  expect(generated['database.ssl.mode']).toBe(verifyingSslMode());
  expect(generated).not.toHaveProperty('database.ssl.truststore');
  expect(stderr).toMatch(/warning: the database certificate is verified against the Connect workers' JVM truststore/);

  // Connect validates a connector's connection when it is registered: refused, named.
  const put = await fetch(`${connectUrl}/connectors/${name}/config`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...generated, 'topic.creation.default.replication.factor': '1' }),
    signal: AbortSignal.timeout(60_000),
  });
  // MariaDB's driver names the certificate; MySQL's reports only "Communications link failure" (the
  // handshake's cause is in the worker's log). The first test shows the same connector with the
  // truststore connects, so the refusal is the certificate's.
  const refusal = stackFlavour() === 'mysql' ? /Unable to connect: Communications link failure/ : /Unable to connect: .*[Cc]ertificate/;
  expect({ status: put.status, body: await put.text() }).toEqual({ status: 400, body: expect.stringMatching(refusal) });
});
