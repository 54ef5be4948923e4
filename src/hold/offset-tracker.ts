/**
 * Per-partition bookkeeping of messages taken into memory, in offset order, so that only the
 * contiguous processed prefix is ever committed: a crash or rebalance re-reads everything from
 * the first unprocessed message, never skipping one (invariant I3). Entries finish out of order
 * (each fires at its own time); the commit point only moves over finished ones.
 */
export class OffsetTracker {
  // Offsets in the order taken; `done` marks finished ones. `head` indexes the first unfinished.
  private offsets: number[] = [];
  private done = new Set<number>();
  private open = new Set<number>();
  private head = 0;

  /** Messages taken and not finished: what holds memory elsewhere (the memory cap applies here). */
  get inFlight(): number {
    return this.open.size;
  }

  /** Offsets tracked but not yet committed past (finished or not). */
  get tracked(): number {
    return this.offsets.length - this.head;
  }

  add(offset: string): void {
    const n = Number(offset);
    this.offsets.push(n);
    this.open.add(n);
  }

  /** Idempotent; an offset never added, or already committed past, is ignored. */
  markDone(offset: string): void {
    const n = Number(offset);
    if (this.open.delete(n)) this.done.add(n);
  }

  /**
   * Advances over the finished prefix. Returns the offset to commit (next to read) when it
   * moved, else undefined.
   */
  advance(): string | undefined {
    const start = this.head;
    while (this.head < this.offsets.length && this.done.has(this.offsets[this.head]!)) {
      this.done.delete(this.offsets[this.head]!);
      this.head += 1;
    }
    if (this.head === start) return undefined;
    const next = this.offsets[this.head - 1]! + 1;
    // Compact now and then so the array does not grow without bound.
    if (this.head > 1024 && this.head * 2 > this.offsets.length) {
      this.offsets = this.offsets.slice(this.head);
      this.head = 0;
    }
    return String(next);
  }
}
