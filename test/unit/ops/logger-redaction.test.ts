import { Writable } from 'node:stream';
import { loadConfig } from '../../../src/config';
import { deepFreeze } from '../../../src/core/deep-freeze';
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

/**
 * What knex throws when a server does not answer (a pool's acquire timing out): the failed query
 * rides on the error, its bindings with it, and a probe's payload is a Buffer.
 */
function knexTimeoutError(): Error {
  return Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
    name: 'KnexTimeoutError',
    sql: 'INSERT INTO event_outbox (event_key, payload) VALUES (?, ?)',
    bindings: ['probe-1-second-3', Buffer.from([0])],
    client: { config: { connection: { host: 'db-2', user: 'svc', password: 'hunter2-knex' } } },
  });
}

/** The one line a logger wrote, parsed. */
function onlyLine(lines: string[]): Record<string, unknown> {
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

test('an error whose query bindings carry a Buffer is logged, its password still redacted', () => {
  const { lines, stream } = capture();
  const err = knexTimeoutError();
  createLogger('info', {}, stream).warn({ err, database: 'second' }, 'capture probe not written; retried at the next interval');
  const line = onlyLine(lines);
  expect(line).toMatchObject({
    level: 40,
    msg: 'capture probe not written; retried at the next interval',
    database: 'second',
    err: {
      type: 'Error',
      message: expect.stringMatching(/Timeout acquiring/),
      sql: expect.stringMatching(/^INSERT/),
      bindings: ['probe-1-second-3', '[Buffer 1 bytes: 00]'],
      client: { config: { connection: { host: 'db-2', user: 'svc', password: '[redacted]' } } },
    },
  });
  // The caller's error is as it was: nothing written into it.
  expect(Buffer.isBuffer((err as unknown as { bindings: unknown[] }).bindings[1])).toBe(true);
  expect((err as unknown as { client: { config: { connection: { password: string } } } }).client.config.connection.password).toBe('hunter2-knex');
});

test.each([
  ['a Buffer', () => Buffer.from('packet')],
  ['a Uint8Array', () => new Uint8Array([1, 2, 3])],
  ['a Float64Array', () => new Float64Array([1.5])],
  ['a DataView', () => new DataView(new ArrayBuffer(4))],
  ['an ArrayBuffer', () => new ArrayBuffer(4)],
])('%s at any depth, beside a password, is logged as its size', (_kind, binary) => {
  for (let depth = 0; depth <= 4; depth += 1) {
    const { lines, stream } = capture();
    let nested: Record<string, unknown> = { data: binary(), password: 'hunter2-deep' };
    for (let i = 0; i < depth; i += 1) nested = { inner: nested };
    createLogger('info', {}, stream).warn({ err: Object.assign(new Error('boom'), { packet: nested }) }, 'binary');
    expect(onlyLine(lines)).toMatchObject({ msg: 'binary' });
    expect(lines[0]).not.toMatch(/hunter2/);
    expect(lines[0]).toMatch(/"data":"\[(Buffer|Uint8Array|Float64Array|DataView|ArrayBuffer) \d+ bytes: [0-9a-f]+\]"/);
  }
});

test('a frozen config with a nested password is logged and left as it was', () => {
  const { lines, stream } = capture();
  const config = deepFreeze({
    db: { host: 'db-1', password: 'hunter2-frozen', pool: { min: 1 } },
    kafka: { sasl: { username: 'u', password: 'hunter2-sasl' } },
  });
  const holder = Object.freeze({ config, payload: Buffer.from('abc') });
  expect(() => createLogger('info', {}, stream).info(holder, 'frozen')).not.toThrow();
  expect(onlyLine(lines)).toMatchObject({
    config: { db: { host: 'db-1', password: '[redacted]', pool: { min: 1 } }, kafka: { sasl: { username: 'u', password: '[redacted]' } } },
  });
  expect(config.db.password).toBe('hunter2-frozen');
});

test('credentials deeper than the old wildcard paths reached, and in an error’s causes, are redacted too', () => {
  const { lines, stream } = capture();
  const deep = { a: { b: { c: { d: { e: { f: { password: 'hunter2-depth-7', TB_DB_PASSWORD: 'hunter2-env-deep' } } } } } } };
  const aggregate = new AggregateError([Object.assign(new Error('inner'), { options: { password: 'hunter2-aggregate' } })], 'all failed');
  createLogger('info', {}, stream).error({ deep, err: aggregate }, 'deep');
  expect(onlyLine(lines)).toMatchObject({ deep: { a: { b: { c: { d: { e: { f: { password: '[redacted]', TB_DB_PASSWORD: '[redacted]' } } } } } } } });
  expect(lines[0]).not.toMatch(/hunter2/);
});

test('an object interpolated into the message and a child logger’s bindings are redacted', () => {
  const { lines, stream } = capture();
  const logger = createLogger('info', {}, stream)
    .child({ role: 'expirer' })
    .child({ db: { host: 'db-1', password: 'hunter2-child' } });
  logger.info('connecting with %j', { host: 'db-1', password: 'hunter2-interpolated' });
  expect(onlyLine(lines)).toMatchObject({ db: { host: 'db-1', password: '[redacted]' }, msg: expect.stringMatching(/connecting with/) });
  expect(lines[0]).not.toMatch(/hunter2/);
});

test('cycles and very deep objects are cut, never followed', () => {
  const { lines, stream } = capture();
  const loop: Record<string, unknown> = { password: 'hunter2-loop', data: Buffer.from([1]) };
  loop['self'] = loop;
  let tooDeep: Record<string, unknown> = { password: 'hunter2-too-deep' };
  for (let i = 0; i < 30; i += 1) tooDeep = { inner: tooDeep };
  createLogger('info', {}, stream).info({ loop, tooDeep }, 'shapes');
  expect(onlyLine(lines)).toMatchObject({ loop: { password: '[redacted]', data: '[Buffer 1 bytes: 01]', self: '[Circular]' } });
  expect(lines[0]).toMatch(/\[too deep to log\]/);
  expect(lines[0]).not.toMatch(/hunter2/);
});

test('a log call never throws because of what it logs: the line is written with a note instead', () => {
  const { lines, stream } = capture();
  const hostile = Object.defineProperty({}, 'boom', {
    enumerable: true,
    get() {
      throw new Error('getter failed');
    },
  });
  expect(() => createLogger('info', {}, stream).warn({ hostile, topic: 't' }, 'still written')).not.toThrow();
  expect(onlyLine(lines)).toMatchObject({ msg: 'still written', logRedactionFailed: expect.stringMatching(/getter failed/) });
});

test('a small object with nothing to redact is logged as it is', () => {
  const { lines, stream } = capture();
  const at = new Date('2024-01-02T03:04:05.000Z');
  createLogger('info', {}, stream).info({ topic: 't', attempt: 2, at, tags: ['a'], nothing: null }, 'plain');
  expect(onlyLine(lines)).toMatchObject({ topic: 't', attempt: 2, at: '2024-01-02T03:04:05.000Z', tags: ['a'], nothing: null, msg: 'plain' });
});
