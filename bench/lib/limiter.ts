/**
 * At most `n` tasks at once, the rest queued in order: a fixed thread pool's behaviour
 * (ThreadPoolTaskExecutor with a queue) in a dozen lines, so no dependency for it. A finishing
 * task hands its slot straight to the next in the queue, so a newcomer can never slip in between.
 */
export function createLimiter(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running < n) running += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      release();
    }
  };
}
