import { statusCodesProblem, type StatusPresence } from '../../../src/core/status-codes-check';

const presence = (p: Partial<StatusPresence>): StatusPresence => ({
  at: 'order (shop.t_order)',
  column: 'status',
  declared: [0, 1, 2],
  hasRows: true,
  anyDeclaredHeld: false,
  held: [10, 20, 30],
  ...p,
});

test('a table with rows none of which holds a declared code: named with the codes it holds', () => {
  expect(statusCodesProblem(presence({}))).toBe(
    'order (shop.t_order): no row holds any of the status values the file declares for status (0, 1, 2); its rows hold 10, 20, 30 (a sample): ' +
      "give this table's own codes in status.values and the transitions' from and to",
  );
});

test('an empty table, or one row holding one declared code, is no problem (a code nothing has reached yet is normal)', () => {
  expect(statusCodesProblem(presence({ hasRows: false, held: [] }))).toBeNull();
  expect(statusCodesProblem(presence({ anyDeclaredHeld: true, held: [] }))).toBeNull();
});
