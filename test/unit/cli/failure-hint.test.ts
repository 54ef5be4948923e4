import { failureHint } from '../../../src/cli/failure-hint';

/** An error as kafkajs and mysql2 give them: a name, a message, maybe a code and a cause. */
function error(name: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name }, extra);
}

test('a SASL failure points at the SASL settings', () => {
  expect(failureHint(error('KafkaJSSASLAuthenticationError', 'SASL SCRAM SHA512 authentication failed: invalid credentials'))).toMatch(
    /^Kafka refused the SASL credentials: check TB_KAFKA_SASL_USERNAME/,
  );
});

test("an untrusted certificate names the CA file of the side it came from, found through kafkajs's wrapping", () => {
  const socket = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  const kafka = error('KafkaJSNumberOfRetriesExceeded', 'Connection error: self-signed certificate in certificate chain', {
    cause: error('KafkaJSConnectionError', 'Connection error', { cause: socket }),
  });
  expect(failureHint(kafka)).toMatch(/^the brokers' certificate is not trusted: set TB_KAFKA_SSL_CA_FILE/);
  expect(failureHint(socket)).toMatch(/^the database's certificate is not trusted: set TB_DB_TLS_CA_FILE/);
  // The registry over https: TimebucketError ← fetch's TypeError ← the socket's error.
  const registry = error('TimebucketError', 'cannot reach the schema registry at https://registry.example/apis/ccompat/v7', {
    cause: error('TypeError', 'fetch failed', { cause: socket }),
  });
  expect(failureHint(registry)).toMatch(/^the schema registry's certificate is not trusted: set NODE_EXTRA_CA_CERTS/);
});

test('a login refused, a registry 401 and a closed Kafka connection each get their hint; other errors none', () => {
  expect(failureHint(error('Error', "Access denied for user 'app'@'10.0.0.1' (using password: YES)", { code: 'ER_ACCESS_DENIED_ERROR' }))).toMatch(
    /TB_DB_USER and TB_DB_PASSWORD/,
  );
  expect(failureHint(error('TimebucketError', 'setting x-value to BACKWARD failed with HTTP 401'))).toMatch(/TB_REGISTRY_USERNAME/);
  expect(failureHint(error('KafkaJSNumberOfRetriesExceeded', 'Closed connection'))).toMatch(/TB_KAFKA_SSL and TB_KAFKA_SASL_MECHANISM/);
  // A timeout is as likely a wrong address: no TLS/SASL guess.
  expect(failureHint(error('KafkaJSNumberOfRetriesExceeded', 'Connection timeout'))).toBeUndefined();
  expect(failureHint(error('Error', 'topology file topics/x.json: no such file'))).toBeUndefined();
  expect(failureHint('a string')).toBeUndefined();
});
