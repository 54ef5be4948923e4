/**
 * Ctrl-C (SIGINT) or SIGTERM during a one-off command (replay, offsets reset, backfill): the
 * command is asked to stop through an AbortSignal. Once it has stopped cleanly (a scan deleted
 * its throwaway consumer group, backfill finished the page in flight and printed how to resume)
 * it throws InterruptedError, whose hint is printed here, and the process exits 130 or 143 (as
 * `run` does). A second signal exits at once.
 */
import { InterruptedError } from '../core/errors';

const EXIT_CODES: Readonly<Record<'SIGINT' | 'SIGTERM', number>> = { SIGINT: 130, SIGTERM: 143 };

export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>, printError: (line: string) => void = console.error): Promise<T | undefined> {
  const controller = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
    const handler = () => {
      if (received !== undefined) process.exit(EXIT_CODES[signal]);
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
