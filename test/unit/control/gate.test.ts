import { createTransitionGate } from '../../../src/control/gate';
import { fakeSwitches } from '../../support/fake-switches';

function manualClock(start = 5_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

test('not throttled: unlimited allowance, never a wait', () => {
  const s = fakeSwitches();
  const gate = createTransitionGate(s.reader, manualClock());
  expect(gate.allowance('coupon')).toBe(Number.POSITIVE_INFINITY);
  gate.consume('coupon', 1_000_000);
  expect(gate.msUntilAllowed('coupon', 10)).toBe(0);
});

test('pauses pass straight through, per switch', () => {
  const s = fakeSwitches();
  const gate = createTransitionGate(s.reader, manualClock());
  s.pause('coupon');
  expect(gate.paused('coupon')).toBe(true);
  expect(gate.paused('order')).toBe(false);
  expect(gate.paused('scanner')).toBe(false);
});

test('a throttle is a token bucket per entity that follows the switch: set, changed, lifted', () => {
  const s = fakeSwitches();
  const clock = manualClock();
  const gate = createTransitionGate(s.reader, clock);
  s.throttle('coupon', 5);
  expect(gate.allowance('coupon')).toBe(5);
  expect(gate.allowance('order')).toBe(Number.POSITIVE_INFINITY);
  gate.consume('coupon', 5);
  expect(gate.allowance('coupon')).toBe(0);
  // Wakes for a batch worth sending (up to a second's worth), not for every token.
  expect(gate.msUntilAllowed('coupon', 100)).toBe(1_000);
  expect(gate.msUntilAllowed('coupon', 2)).toBe(400);
  clock.advance(200);
  expect(gate.allowance('coupon')).toBe(1);
  expect(gate.msUntilAllowed('coupon', 100)).toBe(0);

  s.throttle('coupon', 50); // a new rate keeps what was saved, refills faster
  clock.advance(100);
  expect(gate.allowance('coupon')).toBe(6);
  s.throttle('coupon', undefined);
  expect(gate.allowance('coupon')).toBe(Number.POSITIVE_INFINITY);
});

test('onChange subscribes to the switches', () => {
  const s = fakeSwitches();
  const gate = createTransitionGate(s.reader, manualClock());
  let n = 0;
  const off = gate.onChange(() => (n += 1));
  s.pause('order');
  off();
  s.resume('order');
  expect(n).toBe(1);
  expect(s.listeners()).toBe(1); // the gate's own, which follows throttle changes
});

test('any entity of the catalogue has its throttle; a change re-rates the buckets in use', () => {
  const s = fakeSwitches();
  const clock = manualClock();
  const gate = createTransitionGate(s.reader, clock);
  s.throttle('ticket', 2);
  expect(gate.allowance('ticket')).toBe(2);
  gate.consume('ticket', 2);
  s.throttle('ticket', 10); // applied at the change, before the next call
  clock.advance(100);
  expect(gate.allowance('ticket')).toBe(1);
});
