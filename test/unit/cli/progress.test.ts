/** Progress of a long command: drawn in place on a terminal, logged now and then otherwise. */
import { commandProgress } from '../../../src/cli/progress';
import type { Logger } from '../../../src/ops/logger';

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  const stream = {
    isTTY,
    columns: 200,
    write: (s: string) => (writes.push(s), true),
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
    on: () => stream,
    removeListener: () => stream,
  };
  return { writes, stream: stream as unknown as NodeJS.WriteStream };
}

function fakeLogger() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, logger: { info: (o: Record<string, unknown>) => void lines.push(o) } as unknown as Logger };
}

test('not a terminal: a log line at most every interval, none for a run shorter than that', () => {
  let now = 0;
  const { logger, lines } = fakeLogger();
  const { writes, stream } = fakeStream(false);
  const p = commandProgress({ line: '{value}', logger, interactive: true, stream, now: () => now, logEveryMs: 5_000 });
  p.start('coupon', 100);
  p.update(10, { routed: 10 }, 100);
  now = 4_999;
  p.update(20, { routed: 20 }, 100);
  expect(lines).toEqual([]);
  now = 5_000;
  p.update(30, { routed: 30 }, 100);
  now = 6_000;
  p.update(40, { routed: 40 }, 100);
  p.stop();
  expect(lines).toEqual([{ what: 'coupon', value: 30, total: 100, routed: 30 }]);
  expect(writes).toEqual([]);
});

test('a terminal: the line is drawn with the figures, and nothing is logged', () => {
  const { logger, lines } = fakeLogger();
  const { writes, stream } = fakeStream(true);
  const p = commandProgress({ line: '{value}/{total} read, {routed} routed', logger, interactive: true, stream });
  p.start('coupon', 50);
  p.update(25, { routed: 24 });
  p.stop();
  expect(writes.join('')).toContain('coupon');
  expect(writes.join('')).toContain('25/50 read, 24 routed');
  expect(lines).toEqual([]);
});

test('a terminal but --json: logs instead of drawing, so stdout and stderr stay machine-readable', () => {
  let now = 0;
  const { logger, lines } = fakeLogger();
  const { writes, stream } = fakeStream(true);
  const p = commandProgress({ line: '{value}', logger, interactive: false, stream, now: () => now, logEveryMs: 10 });
  p.start('replay', undefined);
  p.update(1, { transitioned: 1 });
  now = 10;
  p.update(2, { transitioned: 2 });
  expect(lines).toEqual([{ what: 'replay', value: 2, transitioned: 2 }]);
  expect(writes).toEqual([]);
});
