import { MAX_TIMER_MS, offsetClock, systemClock, timerDelay } from '../../../src/core/clock';

describe('timerDelay', () => {
  test('is the time left, never negative', () => {
    expect(timerDelay(1_500, 1_000)).toBe(500);
    expect(timerDelay(1_000, 1_500)).toBe(0);
  });

  test('caps delays Node timers cannot hold (they would fire after 1 ms)', () => {
    const fortyDays = 40 * 86_400_000;
    expect(timerDelay(fortyDays, 0)).toBe(MAX_TIMER_MS);
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
  });
});

test('offsetClock shifts another clock', () => {
  const base = { now: () => 10_000 };
  expect(offsetClock(base, 3_000).now()).toBe(13_000);
  expect(offsetClock(base, -500).now()).toBe(9_500);
  expect(typeof systemClock.now()).toBe('number');
});
