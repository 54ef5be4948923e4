import { idList } from '../../../src/db/id-list';

test('ids become a list of integer literals, exact past 2^53 and up to BIGINT UNSIGNED', () => {
  expect(idList(['5', '7', '9007199254740993', '18446744073709551615'])).toBe('5, 7, 9007199254740993, 18446744073709551615');
});

test.each([[''], ['1 OR 1=1'], ['-1'], ['1e3'], ['12a'], ['123456789012345678901'], [' 1']])('%j is refused before any SQL is built', (bad) => {
  expect(() => idList(['1', bad])).toThrow(RangeError);
});
