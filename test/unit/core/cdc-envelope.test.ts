import { CdcDecodeError, decodeCdcValue } from '../../../src/core/cdc-envelope';

/** The value schema Debezium's JSON converter writes for a (trimmed) coupons row. */
const rowSchema = {
  type: 'struct',
  fields: [
    { type: 'int64', optional: false, field: 'id' },
    { type: 'string', optional: false, default: 'INIT', field: 'status' },
    { type: 'int64', optional: false, name: 'io.debezium.time.Timestamp', version: 1, field: 'expire_time' },
    { type: 'int64', optional: false, name: 'io.debezium.time.Timestamp', version: 1, default: 0, field: 'created_at' },
  ],
  optional: true,
  name: 'tb.timebucket.coupons.Value',
};
const envelopeSchema = {
  type: 'struct',
  fields: [
    { ...rowSchema, field: 'before' },
    { ...rowSchema, field: 'after' },
    {
      type: 'struct',
      fields: [
        { type: 'string', optional: false, field: 'db' },
        { type: 'string', optional: true, name: 'io.debezium.data.Enum', version: 1, field: 'snapshot' },
      ],
      optional: false,
      name: 'io.debezium.connector.mariadb.Source',
      field: 'source',
    },
    { type: 'string', optional: false, field: 'op' },
    { type: 'int64', optional: true, field: 'ts_ms' },
  ],
  optional: false,
  name: 'tb.timebucket.coupons.Envelope',
  version: 2,
};

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
      fieldSchemas: {},
    });
  });

  test('unwraps the JSON converter schema wrapper', () => {
    const wrapped = { schema: { type: 'struct' }, payload: envelope };
    expect(decodeCdcValue(JSON.stringify(wrapped))).toEqual({
      kind: 'change',
      op: 'c',
      before: null,
      after: envelope.after,
      source: { db: 'timebucket', table: 'coupons', tsMs: 1, file: 'binlog.000001', pos: 4, gtid: undefined },
      fieldSchemas: {},
    });
  });

  test('captures the Connect schema names of the row columns from the wrapper', () => {
    const wrapped = { schema: envelopeSchema, payload: envelope };
    const event = decodeCdcValue(JSON.stringify(wrapped));
    // Only named (logical) types appear: plain int64/string columns and the source struct do not.
    expect(event).toMatchObject({ kind: 'change', fieldSchemas: { expire_time: 'io.debezium.time.Timestamp', created_at: 'io.debezium.time.Timestamp' } });
    expect(event.kind === 'change' && Object.keys(event.fieldSchemas).sort()).toEqual(['created_at', 'expire_time']);
  });

  test('merges before and after structs (either may be the only one present)', () => {
    const [before, after] = envelopeSchema.fields;
    const onlyAfter = { ...envelopeSchema, fields: [after] };
    const onlyBefore = { ...envelopeSchema, fields: [before] };
    for (const schema of [onlyAfter, onlyBefore]) {
      expect(decodeCdcValue(JSON.stringify({ schema, payload: envelope }))).toMatchObject({ fieldSchemas: { expire_time: 'io.debezium.time.Timestamp' } });
    }
  });

  test.each([
    ['no fields', { type: 'struct' }],
    ['fields not an array', { type: 'struct', fields: 'x' }],
    ['row struct without fields', { type: 'struct', fields: [{ type: 'struct', field: 'after' }] }],
    ['malformed columns', { type: 'struct', fields: [{ type: 'struct', field: 'after', fields: [null, 3, { name: 'x' }, { field: 'y', name: 7 }] }] }],
    ['null schema', null],
  ])('a wrapper whose schema has %s yields no field schemas, not an error', (_name, schema) => {
    expect(decodeCdcValue(JSON.stringify({ schema, payload: envelope }))).toMatchObject({ kind: 'change', fieldSchemas: {} });
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
