/** Which transitions `timebucket backfill` covers, from the entities file's names. */
import { selectTransitions } from '../../../src/cli/backfill-command';
import { defaults, twoCouponTransitions } from '../reconcile/catalogues';

const usage = (message: string): never => {
  throw new Error(message);
};

test("every transition by default; an entity's; one by its ref", () => {
  expect(selectTransitions(defaults, {}, usage).map((t) => t.ref)).toEqual(['coupon.expired', 'order.cancelled']);
  expect(selectTransitions(twoCouponTransitions, { entity: 'coupon' }, usage).map((t) => t.ref)).toEqual(['coupon.expired', 'coupon.unlocked']);
  expect(selectTransitions(twoCouponTransitions, { transition: 'coupon.unlocked' }, usage).map((t) => t.ref)).toEqual(['coupon.unlocked']);
});

test('a name the file does not hold is a usage error listing the choices', () => {
  expect(() => selectTransitions(defaults, { entity: 'voucher' }, usage)).toThrow(
    "option '--entity <name>' argument 'voucher' is invalid. Allowed choices are coupon, order.",
  );
  expect(() => selectTransitions(defaults, { transition: 'coupon.used' }, usage)).toThrow('Allowed choices are coupon.expired, order.cancelled.');
});
