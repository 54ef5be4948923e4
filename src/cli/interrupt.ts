/**
 * Ctrl-C (SIGINT) or SIGTERM during a one-off command (replay, offsets reset, backfill, explain):
 * the command is asked to stop through an AbortSignal. Once it has stopped cleanly (a scan deleted
 * its throwaway consumer group, backfill finished the page in flight and printed how to resume)
 * it throws InterruptedError, whose hint is printed here, and the process exits 130 or 143 (as
 * `run` does).
 *
 * A second signal exits without waiting for that clean stop, but not before the clean-ups that
 * must not be skipped (runtime/exit-guards.ts: a scan's consumer group deleted) have settled, for
 * at most FORCED_EXIT_WAIT_MS; with none pending it exits at once. Further signals meanwhile
 * change nothing: the wait is already bounded.
 */
import { InterruptedError } from '../core/errors';
import { pendingExitGuards, settleExitGuards } from '../runtime/exit-guards';

const EXIT_CODES: Readonly<Record<'SIGINT' | 'SIGTERM', number>> = { SIGINT: 130, SIGTERM: 143 };

/** How long a second signal waits for the guarded clean-ups: a scan's group deletion waits for kafkajs's setOffsets (some seconds) first. */
export const FORCED_EXIT_WAIT_MS = 10_000;

export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>, printError: (line: string) => void = console.error): Promise<T | undefined> {
  const controller = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  let forcing = false;
  const forcedExit = async (signal: 'SIGINT' | 'SIGTERM') => {
    if (forcing) return;
    forcing = true;
    const pending = pendingExitGuards();
    if (pending.length > 0) {
      printError(`${signal} again: exiting once ${pending.join(', ')} (at most ${FORCED_EXIT_WAIT_MS / 1000} s)`);
      const left = await settleExitGuards(FORCED_EXIT_WAIT_MS);
      for (const g of left) printError(`exiting before ${g.what}: ${g.byHand}`);
    }
    process.exit(EXIT_CODES[signal]);
  };
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
    const handler = () => {
      if (received !== undefined) return void forcedExit(signal);
      received = signal;
      controller.abort();
    };
    process.on(signal, handler);
    return () => process.off(signal, handler);
  });
  try {
    return await work(controller.signal);
  } catch (err) {
    if (!(err instanceof InterruptedError) || received === undefined) throw err;
    printError(`${err.message} by ${received}${err.hint === undefined ? '' : `: ${err.hint}`}`);
    process.exitCode = EXIT_CODES[received];
    return undefined;
  } finally {
    for (const off of handlers) off();
  }
}
