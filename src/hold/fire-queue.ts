/**
 * Entries waiting for their own fire time, earliest first (a binary min-heap). The minute ring
 * releases a whole bucket at its start; this queue then fires each entry at its own due time
 * (entry.expireAtMs, whatever the transition's due column), which is where sub-minute precision
 * comes from.
 */
export class FireQueue<T> {
  private heap: Array<{ at: number; seq: number; item: T }> = [];
  private seq = 0;
  /** No item is later than this (the latest pushed since the queue was last empty). */
  private latestAt = Number.NEGATIVE_INFINITY;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, item: T): void {
    this.heap.push({ at, seq: this.seq++, item });
    if (at > this.latestAt) this.latestAt = at;
    this.up(this.heap.length - 1);
  }

  /** Earliest fire time, or undefined when empty. */
  peekAt(): number | undefined {
    return this.heap[0]?.at;
  }

  /**
   * How many items are due at `now`, for metrics. A walk of the heap that skips every subtree
   * whose root is not due (a child is never earlier than its parent): it visits the due items
   * and their children, not the whole queue. When even the latest item is due (a released hot
   * minute, all due at one instant), every item is: no walk at all.
   */
  countDue(now: number): number {
    if (this.latestAt <= now) return this.heap.length;
    let n = 0;
    const stack: number[] = this.heap.length > 0 ? [0] : [];
    while (stack.length > 0) {
      const i = stack.pop()!;
      if (this.heap[i]!.at > now) continue;
      n += 1;
      const l = 2 * i + 1;
      if (l < this.heap.length) stack.push(l);
      if (l + 1 < this.heap.length) stack.push(l + 1);
    }
    return n;
  }

  /** Removes and returns every item due at `now` (at <= now), earliest first. */
  popDue(now: number, limit = Number.POSITIVE_INFINITY): T[] {
    const out: T[] = [];
    while (out.length < limit && this.heap.length > 0 && this.heap[0]!.at <= now) {
      out.push(this.pop()!);
    }
    return out;
  }

  /** Drops items for which `keep` is false (e.g. entries of partitions lost in a rebalance). */
  retain(keep: (item: T) => boolean): void {
    this.heap = this.heap.filter((e) => keep(e.item));
    this.latestAt = this.heap.reduce((m, e) => Math.max(m, e.at), Number.NEGATIVE_INFINITY);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i -= 1) this.down(i);
  }

  private pop(): T | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.heap.length === 0) this.latestAt = Number.NEGATIVE_INFINITY;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top.item;
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const x = this.heap[a]!;
    this.heap[a] = this.heap[b]!;
    this.heap[b] = x;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.heap.length && this.less(l, m)) m = l;
      if (r < this.heap.length && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
