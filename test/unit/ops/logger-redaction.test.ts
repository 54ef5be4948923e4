import { Writable } from 'node:stream';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/ops/logger';

/** Every line a logger writes, as text. */
function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

test('credentials never reach a log line, however deep the object that carries them', () => {
  const { lines, stream } = capture();
  const logger = createLogger('info', {}, stream);
  const config = loadConfig({
    TB_DB_PASSWORD: 'hunter2-db',
    TB_KAFKA_SASL_MECHANISM: 'scram-sha-512',
    TB_KAFKA_SASL_USERNAME: 'svc',
    TB_KAFKA_SASL_PASSWORD: 'hunter2-sasl',
    TB_REGISTRY_URL: 'https://svc:hunter2-registry@registry.example/apis/ccompat/v7',
  });
  logger.info({ config }, 'config');
  logger.info({ db: config.db }, 'db');
  logger.error({ err: { options: { sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'hunter2-kafka' } } } }, 'client error');
  logger.info({ env: { TB_DB_PASSWORD: 'hunter2-env', TB_KAFKA_SASL_PASSWORD: 'hunter2-env-sasl', TB_REGISTRY_PASSWORD: 'hunter2-env-reg' } }, 'env');
  logger.info({ registry: config.registry }, 'registry');
  expect(lines).toHaveLength(5);
  expect(lines.join('\n')).not.toMatch(/hunter2/);
  expect(lines.join('\n')).toMatch(/\[redacted\]/);
  // What is not a credential is still there.
  expect(JSON.parse(lines[1]!)).toMatchObject({ db: { host: '127.0.0.1', password: '[redacted]' } });
});
