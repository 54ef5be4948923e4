/**
 * Clean-ups a forced exit still waits for. A one-off command's second Ctrl-C (cli/interrupt.ts)
 * exits without waiting for the command to stop cleanly, but not before these have settled, or
 * a short deadline has passed: a scan's throwaway consumer group (kafka/scan-from-time.ts) is
 * deleted before the process goes, instead of staying on the cluster with its committed offsets.
 *
 * Invariant: a guard is registered before the thing it cleans up exists (the group is created
 * by setOffsets inside the guarded work) and leaves the set once its clean-up has settled.
 */

/** `what` the clean-up does ("consumer group X is deleted"); `byHand`: what the operator does when a forced exit went before it. */
export type ExitGuard = Readonly<{ what: string; byHand: string }>;

type Guard = ExitGuard & Readonly<{ settled: Promise<void> }>;

const guards = new Set<Guard>();

/** Runs `work`, which ends with its own clean-up (`guard.what`), under a guard. */
export async function guardExit<T>(wanted: ExitGuard, work: () => Promise<T>): Promise<T> {
  const running = work();
  const guard: Guard = { ...wanted, settled: running.then(noop, noop) };
  guards.add(guard);
  try {
    return await running;
  } finally {
    guards.delete(guard);
  }
}

/** What the guards now registered are waiting for. */
export function pendingExitGuards(): string[] {
  return [...guards].map((g) => g.what);
}

/** Waits for the guards registered now, at most `timeoutMs`: those still pending after that (none once all settled). */
export async function settleExitGuards(timeoutMs: number): Promise<ExitGuard[]> {
  const open = [...guards];
  if (open.length === 0) return [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  try {
    await Promise.race([Promise.all(open.map((g) => g.settled)), deadline]);
  } finally {
    clearTimeout(timer);
  }
  return open.filter((g) => guards.has(g)).map(({ what, byHand }) => ({ what, byHand }));
}

function noop(): void {}
