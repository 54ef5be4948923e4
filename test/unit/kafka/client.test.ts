/**
 * kafkajs's lines through the structured logger: the expected ones (a coordinator starting, the
 * idempotent producer's bounded retries) once per client at info with the reason, their repeats
 * at debug; every other line at kafkajs's level. The messages matched are kafkajs's own.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { logLevel, type LogEntry } from 'kafkajs';
import { createKafka, ExpectedKafkaLines, levelOf } from '../../../src/kafka/client';
import { createLogger } from '../../../src/ops/logger';
import type { Config } from '../../../src/config';

const kafkaConfig: Config['kafka'] = {
  brokers: ['127.0.0.1:1'],
  clientId: 'tb-test',
  requestTimeoutMs: 1_000,
  retries: 1,
  ssl: { enabled: false },
  sasl: undefined,
};

function capture(): { lines: () => Array<Record<string, unknown>>; stream: Writable } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw.push(chunk.toString());
      done();
    },
  });
  return { lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>), stream };
}

const entry = (namespace: string, level: number, message: string, extra: Record<string, unknown> = {}): LogEntry => ({
  namespace,
  level: level as LogEntry['level'],
  label: 'ERROR',
  log: { timestamp: '2026-12-06T00:00:00.000Z', logger: 'kafkajs', message, ...extra },
});

const LOADING = "The coordinator is loading and hence can't process requests for this group";

test('a coordinator starting: the first line of the kind at info with the reason, the repeats at debug', () => {
  const seen = new Set<string>();
  const loading = entry('Connection', logLevel.ERROR, 'Response InitProducerId(key: 22, version: 1)', { error: LOADING });
  expect(levelOf(loading, seen)).toEqual({ level: 'info', expected: expect.stringContaining('a coordinator is starting') });
  const notAvailable = entry('Connection', logLevel.ERROR, 'Response GroupCoordinator(key: 10, version: 2)', {
    error: 'The group coordinator is not available',
  });
  expect(levelOf(notAvailable, seen).level).toBe('debug');
  expect(levelOf(loading, seen).level).toBe('debug');
});

test('every other kafkajs line keeps its level, however often it comes', () => {
  const seen = new Set<string>();
  const unknownTopic = entry('Connection', logLevel.ERROR, 'Response Metadata(key: 3, version: 6)', {
    error: 'This server does not host this topic-partition',
  });
  expect(levelOf(unknownTopic, seen)).toEqual({ level: 'error' });
  expect(levelOf(unknownTopic, seen)).toEqual({ level: 'error' });
  expect(levelOf(entry('Producer', logLevel.WARN, 'something else'), seen)).toEqual({ level: 'warn' });
  // The coordinator's messages only count on a broker's response.
  expect(levelOf(entry('Consumer', logLevel.ERROR, 'Crash', { error: LOADING }), seen)).toEqual({ level: 'error' });
});

test("the messages matched are kafkajs's own: its error table and its producer's warning", () => {
  const { errorCodes } = jest.requireActual<{ errorCodes: Array<{ type: string; message: string }> }>('kafkajs/src/protocol/error');
  const message = (type: string) => errorCodes.find((e) => e.type === type)?.message;
  const coordinator = ExpectedKafkaLines.find((r) => r.kind === 'coordinator-starting')!;
  for (const type of ['GROUP_LOAD_IN_PROGRESS', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR_FOR_GROUP'])
    expect(coordinator.matches(entry('Connection', logLevel.ERROR, 'Response', { error: message(type) }))).toBe(true);
  const producerSource = readFileSync(require.resolve('kafkajs/src/producer/index.js'), 'utf8');
  expect(producerSource).toContain("logger.warn('Limiting retries for the idempotent producer may invalidate EoS guarantees')");
});

test('through a client: the idempotent producer warning once at info with its reason, then at debug; each client keeps its own count', async () => {
  const { lines, stream } = capture();
  const logger = createLogger('debug', {}, stream);
  const first = createKafka(kafkaConfig, logger);
  // Creating an idempotent producer with bounded retries is what logs the warning (no connection is made).
  first.producer({ idempotent: true });
  first.producer({ idempotent: true });
  createKafka(kafkaConfig, logger).producer({ idempotent: true });
  const warnings = lines().filter((l) => l['msg'] === 'Limiting retries for the idempotent producer may invalidate EoS guarantees');
  expect(warnings.map((l) => l['level'])).toEqual([30, 20, 30]);
  expect(warnings[0]).toMatchObject({ component: 'kafkajs', namespace: 'Producer', expected: expect.stringContaining('TB_KAFKA_RETRIES') });
});
