/**
 * Bounded waits on conditions: poll `check` until it returns a value other than undefined,
 * or fail after `timeoutMs` saying what was awaited. Never a bare sleep as synchronisation.
 */
export { waitFor } from '../../bench/lib/wait-for';

/** Awaits `promise`, failing after `timeoutMs` with what was awaited. */
export async function withTimeout<T>(description: string, promise: Promise<T>, timeoutMs = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${description}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
