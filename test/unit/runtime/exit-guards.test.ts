/** The clean-ups a forced exit waits for (runtime/exit-guards.ts): listed while they run, waited for up to a deadline, gone once settled. */
import { guardExit, pendingExitGuards, settleExitGuards } from '../../../src/runtime/exit-guards';

const group = (name: string) => ({ what: `consumer group ${name} is deleted`, byHand: `delete ${name} by hand` });

test('a guard is pending while its work runs, failed or not, and settling waits for it', async () => {
  let finish!: () => void;
  const work = guardExit(group('a'), () => new Promise<string>((resolve) => (finish = () => resolve('done'))));
  const failing = guardExit(group('b'), () => Promise.reject(new Error('broker away')));
  await expect(failing).rejects.toThrow('broker away');
  expect(pendingExitGuards()).toEqual(['consumer group a is deleted']);
  const settled = settleExitGuards(60_000);
  finish();
  await expect(settled).resolves.toEqual([]);
  await expect(work).resolves.toBe('done');
  expect(pendingExitGuards()).toEqual([]);
});

test('settling gives up at its deadline and names what is still pending, with what to do by hand', async () => {
  let finish!: () => void;
  const work = guardExit(group('c'), () => new Promise<void>((resolve) => (finish = resolve)));
  await expect(settleExitGuards(10)).resolves.toEqual([group('c')]);
  finish();
  await work;
  await expect(settleExitGuards(10)).resolves.toEqual([]);
});
