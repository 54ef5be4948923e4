import { duePlausibilityProblem, type DueSample } from '../../../src/core/due-plausibility';

// The database clock, injected: 2026-12-04T21:00:00Z.
const NOW_MS = Date.UTC(2026, 11, 4, 21);
const NOW_S = NOW_MS / 1000;
const DAY_MS = 86_400_000;

const sample = (kind: DueSample['kind'], values: unknown[]): DueSample => ({
  at: 'coupon.expired (shop.t_coupon)',
  column: 'expire_at',
  kind,
  from: ['待使用'],
  values,
});
/** Due times from a day ago to thirty days ahead, in `unit`. */
const spread = (unit: 's' | 'ms') => Array.from({ length: 40 }, (_, i) => (unit === 's' ? NOW_S + (i - 1) * 86_400 : NOW_MS + (i - 1) * DAY_MS));

test('due times plausible in their declared kind pass: epoch ms, epoch s (also as decimal strings), DATETIME', () => {
  expect(duePlausibilityProblem(sample('epoch_ms', spread('ms')), NOW_MS)).toBeNull();
  expect(duePlausibilityProblem(sample('epoch_s', spread('s')), NOW_MS)).toBeNull();
  expect(duePlausibilityProblem(sample('epoch_ms', spread('ms').map(String)), NOW_MS)).toBeNull();
  expect(
    duePlausibilityProblem(
      sample(
        'datetime',
        spread('ms').map((ms) => new Date(ms)),
      ),
      NOW_MS,
    ),
  ).toBeNull();
});

test('no sample (no row in a from-state, a new table) is no problem', () => {
  expect(duePlausibilityProblem(sample('epoch_ms', []), NOW_MS)).toBeNull();
});

test('one plausible value saves the sample: only a column none of whose values fits is refused', () => {
  expect(duePlausibilityProblem(sample('epoch_ms', [0, 0, 0, NOW_MS + DAY_MS]), NOW_MS)).toBeNull();
});

test('epoch seconds declared epoch_ms read as January 1970: every row due at once, the fix is epoch_s, the median shown under each unit', () => {
  const problem = duePlausibilityProblem(sample('epoch_ms', spread('s')), NOW_MS);
  expect(problem).toBe(
    'coupon.expired (shop.t_coupon): due column expire_at is declared epoch_ms, but none of the 40 values sampled from rows in "待使用" is a plausible due time as epoch_ms: ' +
      `every such row would be due at once (median ${NOW_S + 18 * 86_400}: as epoch_ms 1970-01-21T19:26:13.200Z, as epoch_s 2026-12-22T21:00:00.000Z); declare it epoch_s`,
  );
});

test('epoch milliseconds declared epoch_s read as tens of thousands of years ahead: no row ever due, the fix is epoch_ms', () => {
  const problem = duePlausibilityProblem(sample('epoch_s', spread('ms')), NOW_MS);
  expect(problem).toMatch(
    /^coupon\.expired \(shop\.t_coupon\): due column expire_at is declared epoch_s, but none of the 40 values .* as epoch_s: no such row would ever be due \(median \d+: as epoch_ms 2026-12-22T21:00:00\.000Z, as epoch_s \+\d{6}-.*\); declare it epoch_ms$/,
  );
});

test('epoch microseconds fit no due kind: the fix says to store ms or s', () => {
  const problem = duePlausibilityProblem(
    sample(
      'epoch_ms',
      spread('ms').map((ms) => ms * 1000),
    ),
    NOW_MS,
  );
  expect(problem).toMatch(
    /no such row would ever be due .*as epoch_us 2026-12-22T21:00:00\.000Z\); the values look like epoch microseconds, which no due kind reads: store epoch ms \(epoch_ms\) or seconds \(epoch_s\) in expire_at$/,
  );
});

test('everything 0 (a default, not a due time) fits no unit: the fix says to check the column and use NULL for none', () => {
  const problem = duePlausibilityProblem(sample('epoch_s', [0, 0, 0]), NOW_MS);
  expect(problem).toMatch(
    /every such row would be due at once \(median 0: as epoch_ms 1970-01-01T00:00:00\.000Z, as epoch_s 1970-01-01T00:00:00\.000Z\); check that expire_at is this transition's due column and holds epoch ms or s \(0 or a placeholder is no due time: use NULL for none\)$/,
  );
});

test('a DATETIME column all in 1970, or all placeholders centuries ahead, is named with the column to check', () => {
  expect(duePlausibilityProblem(sample('datetime', [new Date(0), new Date(1_000)]), NOW_MS)).toMatch(
    /declared datetime, .*: every such row would be due at once \(median 1970-01-01T00:00:00\.000Z\); check that expire_at is this transition's due column/,
  );
  expect(duePlausibilityProblem(sample('datetime', [new Date('9999-12-31T23:59:59Z')]), NOW_MS)).toMatch(
    /no such row would ever be due \(median 9999-12-31T23:59:59\.000Z\)/,
  );
  // A zero date the driver could not read counts as no due time.
  expect(duePlausibilityProblem(sample('datetime', [new Date(Number.NaN)]), NOW_MS)).toMatch(/\(median no valid instant\)/);
});

test('the window moves with the database clock, not this process: 30 years back and 300 ahead of it', () => {
  const old = NOW_MS - 29 * 365 * DAY_MS;
  expect(duePlausibilityProblem(sample('epoch_ms', [old]), NOW_MS)).toBeNull();
  expect(duePlausibilityProblem(sample('epoch_ms', [old]), NOW_MS + 2 * 365 * DAY_MS)).toMatch(/every such row would be due at once/);
  const far = NOW_MS + 299 * 365 * DAY_MS;
  expect(duePlausibilityProblem(sample('epoch_ms', [far]), NOW_MS)).toBeNull();
  expect(duePlausibilityProblem(sample('epoch_ms', [far]), NOW_MS - 2 * 365 * DAY_MS)).toMatch(/no such row would ever be due/);
});

test('values below and above the window but none in it: named as such', () => {
  expect(duePlausibilityProblem(sample('epoch_ms', [0, 1e15]), NOW_MS)).toMatch(/: none falls between 1996 and 2326 /);
});
