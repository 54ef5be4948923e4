/** Progress of a long replay: on stderr, rewritten in place on a terminal, periodic lines otherwise. */
import { progressOnStderr } from '../../../src/cli/replay-progress';

const counts = { entries: 10, transitioned: 2, due: 0, alreadyDone: 7, notDue: 1, stale: 0, invalid: 0 };

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream };
}

test('not a terminal: a plain line at most every 5 s, none for a replay shorter than that', () => {
  let now = 0;
  const { writes, stream } = fakeStream(false);
  const p = progressOnStderr(false, stream, () => now);
  p.update(counts);
  now = 4_999;
  p.update(counts);
  expect(writes).toEqual([]);
  now = 5_000;
  p.update(counts);
  now = 6_000;
  p.update(counts);
  p.done();
  expect(writes).toEqual(['replay: 10 entries, 2 transitioned, 7 already done, 1 not due, 0 stale\n']);
});

test('a terminal: one line rewritten in place, cleared at the end; a dry run reports due', () => {
  let now = 0;
  const { writes, stream } = fakeStream(true);
  const p = progressOnStderr(true, stream, () => now);
  p.update({ ...counts, transitioned: 0, due: 3 });
  now = 200;
  p.update({ ...counts, transitioned: 0, due: 3 });
  p.done();
  expect(writes).toEqual(['\r\x1b[2Kreplay: 10 entries, 3 due, 7 already done, 1 not due, 0 stale', '\r\x1b[2K']);
});
