import { CdcDecodeError, decodeCdcValue } from '../../../src/core/cdc-envelope';

const envelope = {
  before: null,
  after: { id: 1, status: 'ACTIVE', expire_time: 1924992000123 },
  source: { db: 'timebucket', table: 'coupons', ts_ms: 1, file: 'binlog.000001', pos: 4 },
  op: 'c',
  ts_ms: 2,
};

describe('decodeCdcValue', () => {
  test('decodes a bare envelope', () => {
    expect(decodeCdcValue(Buffer.from(JSON.stringify(envelope)))).toEqual({
      kind: 'change',
      op: 'c',
      before: null,
      after: envelope.after,
      source: { db: 'timebucket', table: 'coupons', tsMs: 1, file: 'binlog.000001', pos: 4, gtid: undefined },
    });
  });

  test('unwraps the JSON converter schema wrapper', () => {
    const wrapped = { schema: { type: 'struct' }, payload: envelope };
    expect(decodeCdcValue(JSON.stringify(wrapped))).toMatchObject({ kind: 'change', op: 'c', after: envelope.after });
  });

  test.each([null, Buffer.alloc(0), 'null', JSON.stringify({ schema: null, payload: null })])('tombstone %#', (value) => {
    expect(decodeCdcValue(value)).toEqual({ kind: 'tombstone' });
  });

  test.each([
    ['not JSON', '{nope', /not JSON/],
    ['an array', '[1]', /not an object/],
    ['an unknown op', JSON.stringify({ ...envelope, op: 'x' }), /unknown op/],
    ['a create without after', JSON.stringify({ ...envelope, after: null }), /without an after image/],
    ['a delete without before', JSON.stringify({ ...envelope, op: 'd', after: null }), /delete without a before image/],
  ])('rejects %s', (_name, value, reason) => {
    expect(() => decodeCdcValue(value)).toThrow(CdcDecodeError);
    expect(() => decodeCdcValue(value)).toThrow(reason);
  });
});
