/**
 * Entries waiting for their own fire time, earliest first (a binary min-heap). The minute ring
 * releases a whole bucket at its start; this queue then fires each entry at its own due time
 * (entry.expireAtMs, whatever the transition's due column), which is where sub-minute precision
 * comes from.
 */
export class FireQueue<T> {
  private heap: Array<{ at: number; seq: number; item: T }> = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, item: T): void {
    this.heap.push({ at, seq: this.seq++, item });
    this.up(this.heap.length - 1);
  }

  /** Earliest fire time, or undefined when empty. */
  peekAt(): number | undefined {
    return this.heap[0]?.at;
  }

  /** How many items are due at `now` (a scan: for metrics, not for the hot path). */
  countDue(now: number): number {
    let n = 0;
    for (const e of this.heap) if (e.at <= now) n += 1;
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
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i -= 1) this.down(i);
  }

  private pop(): T | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined) return undefined;
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

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      [this.heap[i], this.heap[parent]] = [this.heap[parent]!, this.heap[i]!];
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
      [this.heap[i], this.heap[m]] = [this.heap[m]!, this.heap[i]!];
      i = m;
    }
  }
}
