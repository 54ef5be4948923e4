import { schemaFileProblems, SchemaFileSpec } from '../../../src/publish/schema-file-check';

const spec: SchemaFileSpec = {
  kind: 'transition',
  itemIdField: null,
  type: 'ORDER_CANCELLED',
  avroName: 'shop.events.OrderCancelled',
  idField: 'order_id',
  schemaFile: 'order-cancelled.avsc',
  fields: [
    { name: 'user_id', source: 'column', column: 'user_id' },
    { name: 'coupon_released', source: 'effect', effect: 0 },
  ],
};

const standard = ['event_key', 'event_type', 'order_id', 'from_status', 'to_status', 'due_at', 'occurred_at', 'path'];
const record = (names: readonly string[], over: Record<string, unknown> = {}) => ({
  type: 'record',
  name: 'OrderCancelled',
  namespace: 'shop.events',
  fields: names.map((name) => ({ name, type: 'string' })),
  ...over,
});

test('a record of exactly the standard and the declared fields fits, in any order', () => {
  expect(schemaFileProblems(spec, record([...standard, 'user_id', 'coupon_released']))).toEqual([]);
  expect(schemaFileProblems(spec, record(['coupon_released', ...standard.slice().reverse(), 'user_id']))).toEqual([]);
});

test('a missing field is named, and said to be standard or declared', () => {
  expect(schemaFileProblems(spec, record([...standard.filter((n) => n !== 'due_at'), 'coupon_released']))).toEqual([
    "order-cancelled.avsc (ORDER_CANCELLED): field 'due_at' is missing (a standard field)",
    "order-cancelled.avsc (ORDER_CANCELLED): field 'user_id' is missing (declared in the entities file)",
  ]);
});

test('an extra field is named, and a field listed twice', () => {
  expect(schemaFileProblems(spec, record([...standard, 'user_id', 'coupon_released', 'campaign', 'user_id']))).toEqual([
    "order-cancelled.avsc (ORDER_CANCELLED): field 'user_id' is listed twice",
    "order-cancelled.avsc (ORDER_CANCELLED): field 'campaign' is neither a standard field nor declared in the entities file",
  ]);
});

test('the record must be the avroName: namespace.name, or a full name in name', () => {
  const fields = [...standard, 'user_id', 'coupon_released'];
  expect(schemaFileProblems(spec, record(fields, { name: 'shop.events.OrderCancelled', namespace: 'ignored' }))).toEqual([]);
  expect(schemaFileProblems(spec, record(fields, { namespace: 'timebucket.events' }))).toEqual([
    'order-cancelled.avsc (ORDER_CANCELLED): the record is named timebucket.events.OrderCancelled, the entities file says shop.events.OrderCancelled',
  ]);
  expect(schemaFileProblems({ ...spec, avroName: 'OrderCancelled' }, record(fields, { namespace: undefined }))).toEqual([]);
});

test('something that is not a record says so', () => {
  expect(schemaFileProblems(spec, ['string'])).toEqual(['order-cancelled.avsc (ORDER_CANCELLED): not an Avro record']);
  expect(schemaFileProblems(spec, record([], { type: 'enum', fields: undefined }))).toEqual([
    'order-cancelled.avsc (ORDER_CANCELLED): type is "enum", not "record"',
    'order-cancelled.avsc (ORDER_CANCELLED): has no fields list',
  ]);
  expect(schemaFileProblems(spec, record([], { fields: [{ type: 'string' }] }))).toContain('order-cancelled.avsc (ORDER_CANCELLED): field 0 has no name');
});
