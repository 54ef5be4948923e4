/**
 * entriesFromChange on tables other than today's: the rule of bucket-entry.ts read from the
 * catalogue (status typed and checked against the listed values, every transition with its own
 * due column and kind), for catalogues built here from inline entities files.
 */
import { stringify as losslessStringify } from 'lossless-json';
import { BucketEntry, entriesFromChange } from '../../../src/core/bucket-entry';
import { CdcChange, decodeCdcValue } from '../../../src/core/cdc-envelope';
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { CdcInvalidError } from '../../../src/core/errors';

const T = Date.UTC(2031, 0, 2, 3, 4, 5, 678);
const LATER = T + 3_600_000;

const event = (type: string) => ({
  type,
  ceType: `shop.${type.toLowerCase()}`,
  avroName: `shop.events.E${type}`,
  idField: 'row_id',
  summary: `${type} happened.`,
});
const transition = (name: string, from: unknown[], to: unknown, due: { column: string; kind: string }, type: string) => ({
  ...{ name, from, to, due, index: `idx_${name}`, event: event(type) },
});

const catalogue = parseEntityFile(
  {
    entities: [
      {
        // A coupon whose states are Chinese strings, with two timed transitions: it expires
        // (whether free or locked) at expire_time, and a lock times out at lock_expire_time.
        ...{ name: 'voucher', table: 'vouchers', id: 'id' },
        status: { column: 'state', type: 'string', values: ['待使用', '已锁定', '已使用', '已过期'] },
        transitions: [
          transition('expired', ['待使用', '已锁定'], '已过期', { column: 'expire_time', kind: 'datetime' }, 'VOUCHER_EXPIRED'),
          transition('lock_timeout', ['已锁定'], '待使用', { column: 'lock_expire_time', kind: 'datetime' }, 'VOUCHER_LOCK_TIMED_OUT'),
        ],
      },
      {
        // Integer status codes (listed), an id column not called id, a deadline in epoch ms.
        ...{ name: 'ticket', table: 'tickets', id: 'ticket_no' },
        status: { column: 'status_code', type: 'integer', values: [0, 1, 2, 3] },
        transitions: [transition('closed', [1, 2], 3, { column: 'deadline_ms', kind: 'epoch_ms' }, 'TICKET_CLOSED')],
      },
      {
        // Integer status codes not listed: any integer is a state; a deadline in epoch seconds.
        ...{ name: 'session', table: 'sessions', id: 'id' },
        status: { column: 'status', type: 'integer' },
        transitions: [transition('ended', [1], 2, { column: 'expires_s', kind: 'epoch_s' }, 'SESSION_ENDED')],
      },
    ],
  },
  'inline test entities',
);
const VOUCHER = entityOf(catalogue, 'voucher');
const TICKET = entityOf(catalogue, 'ticket');
const SESSION = entityOf(catalogue, 'session');

type Row = Record<string, unknown>;

/** Through decodeCdcValue, as the repartitioner sees it; a bigint is written as a bare JSON number. */
function change(op: string, before: Row | null, after: Row | null): CdcChange {
  const event = decodeCdcValue(losslessStringify({ op, before, after, source: {} })!);
  if (event.kind !== 'change') throw new Error('fixture decoded to a tombstone');
  return event;
}

const entry = (entity: string, transition: string, id: string, expireAtMs: number): BucketEntry => ({ entity, transition, id, expireAtMs });

describe('two transitions of one entity (Chinese string states)', () => {
  const voucher = (over: Row = {}): Row => ({ id: 7, user_id: 42, state: '待使用', expire_time: T, lock_expire_time: null, ...over });
  const locked = (over: Row = {}): Row => voucher({ state: '已锁定', lock_expire_time: T - 60_000, ...over });
  const expired = entry('voucher', 'expired', '7', T);
  const lockTimeout = (ms = T - 60_000) => entry('voucher', 'lock_timeout', '7', ms);

  test('insert 待使用 → one entry, for expiry', () => {
    expect(entriesFromChange(VOUCHER, change('c', null, voucher()))).toEqual([expired]);
  });

  test('insert 已锁定 → two entries for one change, one per transition, each at its own due time', () => {
    expect(entriesFromChange(VOUCHER, change('c', null, locked()))).toEqual([expired, lockTimeout()]);
  });

  test('待使用 → 已锁定: expiry was already scheduled (same state set, same time); the lock timeout is new', () => {
    expect(entriesFromChange(VOUCHER, change('u', voucher(), locked()))).toEqual([lockTimeout()]);
  });

  test('已锁定 → 已锁定 with only other columns changed → no entry: neither transition changed', () => {
    expect(entriesFromChange(VOUCHER, change('u', locked(), locked({ user_id: 43 })))).toEqual([]);
  });

  test('已锁定 with lock_expire_time moved → only the lock timeout, at the new time', () => {
    expect(entriesFromChange(VOUCHER, change('u', locked(), locked({ lock_expire_time: LATER })))).toEqual([lockTimeout(LATER)]);
  });

  test('已锁定 with both due columns moved → both, at the new times', () => {
    const after = locked({ expire_time: LATER, lock_expire_time: LATER - 1 });
    expect(entriesFromChange(VOUCHER, change('u', locked(), after))).toEqual([entry('voucher', 'expired', '7', LATER), lockTimeout(LATER - 1)]);
  });

  test('已锁定 with a NULL lock_expire_time → no lock-timeout entry (no deadline), expiry still scheduled', () => {
    expect(entriesFromChange(VOUCHER, change('c', null, locked({ lock_expire_time: null })))).toEqual([expired]);
  });

  test('已锁定 → 待使用 (lock released) → no entry: expiry already scheduled, the lock timeout no longer live', () => {
    expect(entriesFromChange(VOUCHER, change('u', locked(), voucher()))).toEqual([]);
  });

  test.each(['已使用', '已过期'])('已锁定 → %s → no entry', (state) => {
    expect(entriesFromChange(VOUCHER, change('u', locked(), locked({ state })))).toEqual([]);
  });

  test('a state the file does not list is corrupt data, named as it is', () => {
    const run = () => entriesFromChange(VOUCHER, change('c', null, voucher({ state: '已作废' })));
    expect(run).toThrow(CdcInvalidError);
    expect(run).toThrow('after.state: unknown voucher state "已作废"');
  });

  test('a missing due column of a live transition is CdcInvalidError naming it', () => {
    const row = locked();
    delete row['lock_expire_time'];
    expect(() => entriesFromChange(VOUCHER, change('c', null, row))).toThrow(/^after\.lock_expire_time: missing$/);
  });

  test('a due column of a transition that is not live is not read', () => {
    const row = voucher();
    delete row['lock_expire_time'];
    expect(entriesFromChange(VOUCHER, change('c', null, row))).toEqual([expired]);
  });
});

describe('integer status codes and an epoch_ms deadline', () => {
  const ticket = (over: Row = {}): Row => ({ ticket_no: 900, status_code: 1, deadline_ms: T, ...over });
  const closed = (ms = T, id = '900') => entry('ticket', 'closed', id, ms);

  test.each([1, 2])('insert with code %i → entry (the id read from ticket_no)', (status_code) => {
    expect(entriesFromChange(TICKET, change('c', null, ticket({ status_code })))).toEqual([closed()]);
  });

  test.each([0, 3])('insert with code %i → no entry', (status_code) => {
    expect(entriesFromChange(TICKET, change('c', null, ticket({ status_code })))).toEqual([]);
  });

  test('1 → 2 with the same deadline → no entry; 0 → 1 → entry', () => {
    expect(entriesFromChange(TICKET, change('u', ticket(), ticket({ status_code: 2 })))).toEqual([]);
    expect(entriesFromChange(TICKET, change('u', ticket({ status_code: 0 }), ticket()))).toEqual([closed()]);
  });

  test('the deadline as a bigint (a change handed in directly) is read exactly', () => {
    const direct: CdcChange = { kind: 'change', op: 'c', before: null, after: ticket({ deadline_ms: BigInt(T) }), source: {}, fieldSchemas: {} };
    expect(entriesFromChange(TICKET, direct)).toEqual([closed()]);
  });

  test.each([
    ['a code the file does not list', { status_code: 7 }, 'after.status_code: unknown ticket state 7'],
    ['a code beyond 2^53 (a bigint)', { status_code: 9007199254740993n }, 'after.status_code: unknown ticket state 9007199254740993'],
    ['a code as a string', { status_code: '1' }, 'after.status_code: expected an integer, got "1"'],
    ['a fractional code', { status_code: 1.5 }, 'after.status_code: expected an integer, got 1.5'],
    ['a NULL code', { status_code: null }, 'after.status_code: expected an integer, got null'],
    ['a fractional deadline', { deadline_ms: T + 0.5 }, `after.deadline_ms: epoch_ms must be an integer, got ${T + 0.5}`],
    ['a deadline as a string', { deadline_ms: String(T) }, `after.deadline_ms: epoch_ms must be an integer, got "${T}"`],
    ['a deadline before 1970', { deadline_ms: -1 }, 'after.deadline_ms: before 1970 (-1 ms)'],
    ['a deadline beyond any date', { deadline_ms: 2n ** 60n }, `after.deadline_ms: epoch_ms out of range: ${2n ** 60n}`],
    ['a missing deadline', { deadline_ms: undefined }, 'after.deadline_ms: missing'],
    ['a zero id', { ticket_no: 0 }, /^after\.ticket_no: expected a positive integer/],
  ])('%s → CdcInvalidError naming the field', (_what, over, reason) => {
    const run = () => entriesFromChange(TICKET, change('c', null, ticket(over)));
    expect(run).toThrow(CdcInvalidError);
    expect(run).toThrow(reason);
  });

  test('a NULL deadline → no entry', () => {
    expect(entriesFromChange(TICKET, change('c', null, ticket({ deadline_ms: null })))).toEqual([]);
  });

  test('an epoch column with a Connect temporal schema is refused: its unit is not the declared one', () => {
    const direct: CdcChange = {
      kind: 'change',
      op: 'c',
      before: null,
      after: ticket(),
      source: {},
      fieldSchemas: { deadline_ms: 'io.debezium.time.Timestamp' },
    };
    expect(() => entriesFromChange(TICKET, direct)).toThrow(
      /^after\.deadline_ms: unsupported Connect schema "io\.debezium\.time\.Timestamp" for an epoch_ms column$/,
    );
  });

  test('a before image with a bad code cannot prove anything: entry, not an error', () => {
    expect(entriesFromChange(TICKET, change('u', ticket({ status_code: 'x' }), ticket()))).toEqual([closed()]);
  });
});

describe('integer status codes the file does not list, and an epoch_s deadline', () => {
  const S = 1_924_992_000; // 2031-01-01T00:00:00Z in seconds
  const session = (over: Row = {}): Row => ({ id: 5, status: 1, expires_s: S, ...over });

  test('seconds are read as seconds: × 1000', () => {
    expect(entriesFromChange(SESSION, change('c', null, session()))).toEqual([entry('session', 'ended', '5', S * 1000)]);
  });

  test('any integer is a state when none are listed: not live → no entry, not an error', () => {
    expect(entriesFromChange(SESSION, change('c', null, session({ status: 99 })))).toEqual([]);
    expect(entriesFromChange(SESSION, change('c', null, session({ status: 9007199254740993n })))).toEqual([]);
  });

  test('the deadline moved by a second → entry at the new time', () => {
    expect(entriesFromChange(SESSION, change('u', session(), session({ expires_s: S + 1 })))).toEqual([entry('session', 'ended', '5', (S + 1) * 1000)]);
  });

  test.each([
    ['beyond any date once in ms', { expires_s: 9_000_000_000_000 }, 'after.expires_s: epoch_s out of range: 9000000000000'],
    ['before 1970', { expires_s: -1 }, 'after.expires_s: before 1970 (-1000 ms)'],
    ['a status that is not an integer', { status: true }, 'after.status: expected an integer, got boolean'],
  ])('%s → CdcInvalidError', (_what, over, reason) => {
    expect(() => entriesFromChange(SESSION, change('c', null, session(over)))).toThrow(reason);
  });
});

test('a delete → no entry, for every entity', () => {
  expect(entriesFromChange(VOUCHER, change('d', { id: 7, state: '已锁定' }, null))).toEqual([]);
  expect(entriesFromChange(TICKET, change('d', { ticket_no: 900, status_code: 1 }, null))).toEqual([]);
});
