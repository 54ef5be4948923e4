/**
 * Bounded waits on conditions: poll `check` until it returns a value other than undefined,
 * or fail after `timeoutMs` saying what was awaited. Never a bare sleep as synchronisation.
 * The bench's and the integration tests' one wait (test/support/wait-for.ts re-exports it).
 */
export async function waitFor<T>(
  description: string,
  check: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
