import { DEFAULT_FIRST_PASS, dueCountCap, firstPassProblem, notDueBound, type FirstPassCounts, firstPassLimitsFor } from '../../../src/core/first-pass-guard';

const counts = (due: number, notDue: number, dueCapped = false): FirstPassCounts => ({
  at: 'coupon.expired (shop.t_coupon)',
  states: '"ACTIVE"',
  due,
  dueCapped,
  notDue,
});

test('most of a large table due on the first pass is refused, naming the counts, the limits and the flag', () => {
  expect(firstPassProblem(counts(95_000, 5_000), DEFAULT_FIRST_PASS)).toBe(
    'coupon.expired (shop.t_coupon): the first pass would transition 95000 of the 100000 rows in "ACTIVE" at once (95% are due by the database clock; ' +
      'the limit is TB_FIRST_PASS_MAX_DUE_SHARE=0.5 of tables with TB_FIRST_PASS_MIN_DUE_ROWS=10000 due or more); ' +
      'if the due column and its kind are right and this backlog is meant to go now, start with TB_ALLOW_LARGE_FIRST_PASS=true',
  );
});

test('a share at the limit, a small first pass, or the flag: no problem', () => {
  expect(firstPassProblem(counts(50_000, 50_000), DEFAULT_FIRST_PASS)).toBeNull();
  expect(firstPassProblem(counts(9_999, 0), DEFAULT_FIRST_PASS)).toBeNull();
  expect(firstPassProblem(counts(10_000, 0), DEFAULT_FIRST_PASS)).toMatch(/transition 10000 of the 10000 rows/);
  expect(firstPassProblem(counts(95_000, 5_000), { ...DEFAULT_FIRST_PASS, allowLarge: true })).toBeNull();
  expect(firstPassProblem(counts(20, 0), { ...DEFAULT_FIRST_PASS, minDueRows: 10 })).toMatch(/TB_FIRST_PASS_MIN_DUE_ROWS=10 /);
});

test('the not-due count stops where the share is within the limit, so the bounded count decides exactly', () => {
  for (const share of [0.1, 0.25, 0.5, 0.9]) {
    for (const due of [10_000, 12_345, 100_000]) {
      const bound = notDueBound(due, share);
      const limits = { ...DEFAULT_FIRST_PASS, maxDueShare: share };
      // At the bound (all the count reads when there are more): within the limit.
      expect(firstPassProblem(counts(due, bound), limits)).toBeNull();
      // One fewer: over it.
      expect(firstPassProblem(counts(due, bound - 1), limits)).not.toBeNull();
    }
  }
});

test('a due count at the cap is reported as a lower bound', () => {
  const cap = dueCountCap(DEFAULT_FIRST_PASS);
  expect(cap).toBe(100_000);
  expect(dueCountCap({ ...DEFAULT_FIRST_PASS, minDueRows: 500_000 })).toBe(500_000);
  expect(firstPassProblem(counts(cap, 10, true), DEFAULT_FIRST_PASS)).toMatch(
    /transition at least 100000 of the at least 100010 rows in "ACTIVE" at once \(at least 99% are due/,
  );
});

test('every process that transitions is guarded (the expirer as the scanner); one that transitions nothing reads no counts', () => {
  const limits = { maxDueShare: 0.5, minDueRows: 10, allowLarge: false };
  expect(firstPassLimitsFor(['scanner'], limits)).toEqual(limits);
  expect(firstPassLimitsFor(['repartitioner', 'expirer', 'cascader', 'scanner', 'outbox-keeper'], limits)).toEqual(limits);
  expect(firstPassLimitsFor(['expirer'], limits)).toEqual(limits);
  expect(firstPassLimitsFor(['repartitioner', 'cascader', 'outbox-keeper'], limits).allowLarge).toBe(true);
});
