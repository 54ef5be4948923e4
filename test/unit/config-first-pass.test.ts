import { loadConfig } from '../../src/config';
import { DEFAULT_FIRST_PASS } from '../../src/core/first-pass-guard';

test('the first-pass guard is on by default, with the limits the guard module states', () => {
  expect(loadConfig({}).firstPass).toEqual(DEFAULT_FIRST_PASS);
});

test('TB_FIRST_PASS_* set the limits and TB_ALLOW_LARGE_FIRST_PASS=true lifts the guard; anything else is named', () => {
  expect(loadConfig({ TB_FIRST_PASS_MAX_DUE_SHARE: '0.8', TB_FIRST_PASS_MIN_DUE_ROWS: '500', TB_ALLOW_LARGE_FIRST_PASS: 'true' }).firstPass).toEqual({
    maxDueShare: 0.8,
    minDueRows: 500,
    allowLarge: true,
  });
  expect(() => loadConfig({ TB_ALLOW_LARGE_FIRST_PASS: 'yes' })).toThrow(/TB_ALLOW_LARGE_FIRST_PASS/);
  // 1 would never refuse: the flag is the one way to turn it off.
  expect(() => loadConfig({ TB_FIRST_PASS_MAX_DUE_SHARE: '1' })).toThrow(/TB_FIRST_PASS_MAX_DUE_SHARE/);
  expect(() => loadConfig({ TB_FIRST_PASS_MIN_DUE_ROWS: '0' })).toThrow(/TB_FIRST_PASS_MIN_DUE_ROWS/);
});
