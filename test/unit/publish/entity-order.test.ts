import { splitBehindEarlier } from '../../../src/publish/entity-order';

const row = (id: string, entityId: string, entityType = 'coupon') => ({ id, entityType, entityId });

test('with nothing in flight every row of the batch is leased, in batch order', () => {
  const batch = [row('10', 'a'), row('11', 'b'), row('12', 'a')];
  expect(splitBehindEarlier(batch, batch)).toEqual({ lease: batch, defer: [] });
  expect(splitBehindEarlier(batch, [])).toEqual({ lease: batch, defer: [] });
});

test('a row whose entity has an earlier unpublished row outside the batch waits, with the rest of its entity', () => {
  const batch = [row('10', 'a'), row('11', 'b'), row('12', 'a')];
  const inFlight = [row('3', 'a'), row('4', 'c')];
  expect(splitBehindEarlier(batch, [...inFlight, ...batch])).toEqual({ lease: [row('11', 'b')], defer: [row('10', 'a'), row('12', 'a')] });
});

test('an entity is its type and id: an order with a coupon id in flight is not held back', () => {
  const batch = [row('10', '7', 'order')];
  expect(splitBehindEarlier(batch, [row('3', '7', 'coupon')])).toEqual({ lease: batch, defer: [] });
});

test('only an earlier row holds a batch row back', () => {
  // A later outside row of the same entity (a lease that ran out and came back) does not.
  const batch = [row('10', 'a')];
  expect(splitBehindEarlier(batch, [row('15', 'a')]).defer).toEqual([]);
  expect(splitBehindEarlier(batch, [row('9', 'a')]).defer).toEqual(batch);
});

test('ids compare as 64-bit integers, not as text or rounded numbers', () => {
  // As text '9' > '10'; as doubles 2^53 + 1 and 2^53 + 2 round to 2^53 and 2^53 + 2.
  expect(splitBehindEarlier([row('10', 'a')], [row('9', 'a')]).defer).toHaveLength(1);
  expect(splitBehindEarlier([row('9007199254740993', 'a')], [row('9007199254740994', 'a')]).defer).toHaveLength(0);
  expect(splitBehindEarlier([row('18446744073709551615', 'a')], [row('18446744073709551614', 'a')]).defer).toHaveLength(1);
});
