import { backoffMs, classifyFailure } from '../../../src/runtime/retry-policy';
import { CdcInvalidError, TimebucketError } from '../../../src/core/errors';

const withProps = (props: Record<string, unknown>) => Object.assign(new Error('x'), props);

describe('classifyFailure', () => {
  test.each([
    ['deadlock', withProps({ errno: 1213, code: 'ER_LOCK_DEADLOCK' })],
    ['lock wait timeout', withProps({ errno: 1205 })],
    ['server gone', withProps({ errno: 2006 })],
    ['a column grant revoked', withProps({ errno: 1143, code: 'ER_COLUMNACCESS_DENIED_ERROR' })],
    ['an account locked, MariaDB', withProps({ errno: 4151, code: 'ER_ACCOUNT_HAS_BEEN_LOCKED' })],
    ['an account locked, MySQL', withProps({ errno: 3118, code: 'ER_ACCOUNT_HAS_BEEN_LOCKED' })],
    ['a statement killed by an operator', withProps({ errno: 1317, code: 'ER_QUERY_INTERRUPTED' })],
    ['connection lost', withProps({ code: 'PROTOCOL_CONNECTION_LOST', fatal: true })],
    ['connection refused', withProps({ code: 'ECONNREFUSED' })],
    ['pool exhausted', withProps({ name: 'KnexTimeoutError' })],
    ['breaker open', withProps({ code: 'EOPENBREAKER' })],
    ['kafkajs retriable', withProps({ name: 'KafkaJSProtocolError', retriable: true })],
    // kafkajs calls it non-retriable; the guarded producer's replacement is accepted.
    ['producer sequence refused', withProps({ name: 'KafkaJSProtocolError', type: 'OUT_OF_ORDER_SEQUENCE_NUMBER', code: 45, retriable: false })],
    ['producer id unknown', withProps({ name: 'KafkaJSProtocolError', type: 'UNKNOWN_PRODUCER_ID', code: 59, retriable: false })],
    ['a retriable error of ours', new TimebucketError('CONNECT_UNAVAILABLE', 'down', { retriable: true })],
  ])('%s → retriable', (_name, err) => {
    expect(classifyFailure(err)).toBe('retriable');
  });

  test.each([
    ['constraint', withProps({ errno: 4025, code: 'ER_CONSTRAINT_FAILED' })],
    ['syntax', withProps({ errno: 1064, code: 'ER_PARSE_ERROR' })],
    ['data too long', withProps({ errno: 1406, code: 'ER_DATA_TOO_LONG' })],
    ['a bug', new TypeError('undefined is not a function')],
    ['invalid data of ours', new CdcInvalidError('bad')],
    ['kafkajs non-retriable', withProps({ name: 'KafkaJSNonRetriableError', retriable: false })],
    ['records refused', withProps({ name: 'KafkaJSProtocolError', type: 'MESSAGE_TOO_LARGE', code: 10, retriable: false })],
    ['not an error', 'boom'],
  ])('%s → deterministic', (_name, err) => {
    expect(classifyFailure(err)).toBe('deterministic');
  });
});

describe('backoffMs', () => {
  const b = { baseMs: 100, maxMs: 5_000 };
  test('full jitter under an exponential ceiling, capped', () => {
    expect([1, 2, 3, 4, 10, 100].map((a) => backoffMs(a, b, () => 1))).toEqual([100, 200, 400, 800, 5_000, 5_000]);
    expect(backoffMs(3, b, () => 0)).toBe(0);
    expect(backoffMs(3, b, () => 0.5)).toBe(200);
  });
});
