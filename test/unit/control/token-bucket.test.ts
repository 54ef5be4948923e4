import { TokenBucket } from '../../../src/control/token-bucket';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

test('starts with one second worth of tokens, then refills at the rate', () => {
  const clock = manualClock();
  const bucket = new TokenBucket(10, clock);
  expect(bucket.available()).toBe(10);
  bucket.take(10);
  expect(bucket.available()).toBe(0);
  clock.advance(100);
  expect(bucket.available()).toBe(1);
  clock.advance(450);
  expect(bucket.available()).toBe(5);
});

test('never saves more than one second worth', () => {
  const clock = manualClock();
  const bucket = new TokenBucket(10, clock);
  clock.advance(60_000);
  expect(bucket.available()).toBe(10);
});

test('over any window the tokens taken stay within rate × window + capacity', () => {
  const clock = manualClock();
  const bucket = new TokenBucket(7, clock);
  let taken = 0;
  for (let t = 0; t < 10_000; t += 13) {
    const n = bucket.available();
    bucket.take(n);
    taken += n;
    clock.advance(13);
  }
  expect(taken).toBeLessThanOrEqual(7 * 10 + 7);
  expect(taken).toBeGreaterThanOrEqual(7 * 10 - 1);
});

test('msUntil: 0 when there are enough tokens, else the time to the wanted count (capped at the capacity)', () => {
  const clock = manualClock();
  const bucket = new TokenBucket(4, clock);
  expect(bucket.msUntil(4)).toBe(0);
  bucket.take(4);
  expect(bucket.msUntil(1)).toBe(250);
  expect(bucket.msUntil(2)).toBe(500);
  expect(bucket.msUntil(1_000)).toBe(1_000); // capped at the capacity: 4 tokens
  clock.advance(250);
  expect(bucket.msUntil(1)).toBe(0);
});

test('a rate below one a second still lets single rows go, one every 1/rate seconds', () => {
  const clock = manualClock();
  const bucket = new TokenBucket(0.5, clock);
  expect(bucket.capacity).toBe(1);
  expect(bucket.available()).toBe(1);
  bucket.take(1);
  expect(bucket.msUntil(5)).toBe(2_000);
  clock.advance(1_999);
  expect(bucket.available()).toBe(0);
  clock.advance(1);
  expect(bucket.available()).toBe(1);
});

test('setRate applies from now and drops tokens beyond the new capacity', () => {
  const clock = manualClock();
  const bucket = new TokenBucket(100, clock);
  bucket.setRate(2);
  expect(bucket.available()).toBe(2);
  bucket.take(2);
  clock.advance(500);
  expect(bucket.available()).toBe(1);
  bucket.setRate(1_000);
  clock.advance(10);
  expect(bucket.available()).toBe(11);
});

test('a clock stepping back adds nothing', () => {
  const clock = manualClock();
  const bucket = new TokenBucket(10, clock);
  bucket.take(10);
  clock.advance(-5_000);
  expect(bucket.available()).toBe(0);
  clock.advance(5_100);
  expect(bucket.available()).toBe(1);
});

test('rejects rates that are not positive numbers', () => {
  const clock = manualClock();
  expect(() => new TokenBucket(0, clock)).toThrow(RangeError);
  expect(() => new TokenBucket(Number.NaN, clock)).toThrow(RangeError);
  expect(() => new TokenBucket(5, clock).setRate(-1)).toThrow(RangeError);
});
