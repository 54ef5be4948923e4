/** What an interrupted backfill prints to finish its window (cli/backfill-resume.ts). */
import { resumeHint } from '../../../src/cli/backfill-resume';

const progress = (transition: string, lastExpireAtMs?: number) => ({
  entity: 'coupon',
  transition,
  total: 10,
  read: 4,
  routed: 4,
  due: 0,
  reminders: 0,
  ...(lastExpireAtMs !== undefined && { lastExpireAtMs }),
});
const window = { since: new Date('2026-12-01T00:00:00Z'), until: new Date('2026-12-02T00:00:00Z') };

test('the interrupted transition resumes from its last due time, the ones not started from the window start, all with --until', () => {
  const hint = resumeHint(
    { transitions: [progress('expired', Date.parse('2026-12-01T06:30:00.250Z'))], complete: false, notStarted: ['coupon.unlocked', 'order.cancelled'] },
    window,
  );
  expect(hint).toEqual({
    entity: 'coupon',
    transition: 'expired',
    since: '2026-12-01T06:30:00.250Z',
    until: '2026-12-02T00:00:00.000Z',
    then: ['coupon.unlocked', 'order.cancelled'],
    commands: [
      '--transition coupon.expired --since 2026-12-01T06:30:00.250Z --until 2026-12-02T00:00:00.000Z',
      '--transition coupon.unlocked --since 2026-12-01T00:00:00.000Z --until 2026-12-02T00:00:00.000Z',
      '--transition order.cancelled --since 2026-12-01T00:00:00.000Z --until 2026-12-02T00:00:00.000Z',
    ],
  });
});

test('stopped before its first page, or without a window, it names only what the run had', () => {
  expect(resumeHint({ transitions: [progress('expired')], complete: false, notStarted: [] }, {})?.commands).toEqual(['--transition coupon.expired']);
  expect(resumeHint({ transitions: [progress('expired')], complete: false, notStarted: [] }, { until: window.until })?.commands).toEqual([
    '--transition coupon.expired --until 2026-12-02T00:00:00.000Z',
  ]);
});

test('a complete run has nothing to resume', () => {
  expect(resumeHint({ transitions: [progress('expired', 1)], complete: true, notStarted: [] }, window)).toBeUndefined();
});
