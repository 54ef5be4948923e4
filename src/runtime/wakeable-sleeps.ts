/**
 * Timers a loop sleeps on that its owner can cut short: stop() wakes every sleeper at once, so a
 * loop waiting out an idle period or a back-off stops at once instead of after the wait.
 * Used by the outbox retention and the compensation scanner.
 */
export class WakeableSleeps {
  private readonly wakers = new Set<() => void>();

  /** Resolves after ms, or at the next wakeAll(), whichever comes first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }

  /** Ends every sleep in progress now. Sleeps started afterwards run normally. */
  wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
