/**
 * Per-partition bookkeeping of messages taken into memory, in offset order, so that only the
 * contiguous processed prefix is ever committed: a crash or rebalance re-reads everything from
 * the first unprocessed message, never skipping one (invariant I3). Entries finish out of order
 * (each fires at its own time); the commit point only moves over finished ones.
 *
 * Offsets arrive in increasing order, so they are kept in an array with a finished flag beside
 * each, and found by position (contiguous offsets) or by binary search (gaps): no per-offset
 * hash entries, which a hot minute of a hundred thousand entries per partition turned into
 * garbage-collector work.
 */
export class OffsetTracker {
  // Offsets in the order taken; `finished[i]` for offsets[i]. `head` indexes the first uncommitted.
  private offsets: number[] = [];
  private finished: boolean[] = [];
  private head = 0;
  private unfinished = 0;

  /** Messages taken and not finished: what holds memory elsewhere (the memory cap applies here). */
  get inFlight(): number {
    return this.unfinished;
  }

  /** Offsets tracked but not yet committed past (finished or not). */
  get tracked(): number {
    return this.offsets.length - this.head;
  }

  /** Offsets must come in increasing order (a partition's); one already tracked is ignored. */
  add(offset: string): void {
    const n = Number(offset);
    const last = this.offsets[this.offsets.length - 1];
    if (last !== undefined && n <= last) return;
    this.offsets.push(n);
    this.finished.push(false);
    this.unfinished += 1;
  }

  /** Idempotent; an offset never added, or already committed past, is ignored. */
  markDone(offset: string): void {
    const i = this.indexOf(Number(offset));
    if (i === -1 || this.finished[i]) return;
    this.finished[i] = true;
    this.unfinished -= 1;
  }

  /**
   * Advances over the finished prefix. Returns the offset to commit (next to read) when it
   * moved, else undefined.
   */
  advance(): string | undefined {
    const start = this.head;
    while (this.head < this.offsets.length && this.finished[this.head]) this.head += 1;
    if (this.head === start) return undefined;
    const next = this.offsets[this.head - 1]! + 1;
    // Compact now and then so the arrays do not grow without bound.
    if (this.head > 1024 && this.head * 2 > this.offsets.length) {
      this.offsets = this.offsets.slice(this.head);
      this.finished = this.finished.slice(this.head);
      this.head = 0;
    }
    return String(next);
  }

  /** The position of `n` among the uncommitted offsets, or -1. */
  private indexOf(n: number): number {
    const first = this.offsets[this.head];
    if (first === undefined || n < first) return -1;
    // Offsets without gaps (the usual case): straight to it.
    const guess = this.head + (n - first);
    if (this.offsets[guess] === n) return guess;
    let lo = this.head;
    let hi = this.offsets.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.offsets[mid]!;
      if (v === n) return mid;
      if (v < n) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
