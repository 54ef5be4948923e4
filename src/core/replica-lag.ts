/**
 * A replica's lag, from the heartbeat row this process writes on the primary and reads back on
 * the replica (db/replica-heartbeat.ts), as pt-heartbeat and gh-ost measure it: sub-second, where
 * Seconds_Behind_Source is whole seconds and, under parallel apply, the age of whatever event a
 * worker is on rather than of the oldest not applied.
 *
 * Each beat carries a sequence number; the log keeps, per beat, when its commit was acknowledged
 * on this process's clock. A replica whose row shows beat s to a read sent at time r has applied
 * every transaction the primary committed before beat s, and not beat s + 1: its lag at r is how
 * long before r beat s + 1 was committed (0 when s + 1 was committed after r). Only differences of
 * this process's own clock enter it, so no clock is compared with another's (the primary's and the
 * replica's clocks, and this host's, may disagree by seconds). Resolution: one beat interval (a
 * replica caught up with the last beat is at 0 even with later transactions not yet applied), as
 * pt-heartbeat's.
 *
 * Invariants: beats are acknowledged in increasing sequence (one writer, one beat at a time);
 * the log keeps the last `keep` beats, so a replica behind by more than that many beats reads as
 * behind by the oldest kept one (a lower bound, still far above any threshold).
 */

export type Beat = Readonly<{ seq: number; committedAtMs: number }>;

export class HeartbeatLog {
  private readonly beats: Beat[] = [];

  constructor(private readonly keep = 4_800) {}

  /** Beat `seq` committed on the primary, acknowledged at `atMs` (this process's clock). */
  committed(seq: number, atMs: number): void {
    const last = this.beats[this.beats.length - 1];
    if (last !== undefined && seq <= last.seq) return;
    this.beats.push({ seq, committedAtMs: atMs });
    if (this.beats.length > this.keep) this.beats.splice(0, this.beats.length - this.keep);
  }

  /** The last beat acknowledged, if any. */
  last(): Beat | undefined {
    return this.beats[this.beats.length - 1];
  }

  /**
   * The lag of a replica whose heartbeat row showed `replicatedSeq` (undefined: no row yet, so no
   * beat applied) to a read sent at `readAtMs`: how long before the read the oldest beat it lacked
   * was committed, 0 when it lacked none committed before the read. Undefined while no beat had
   * been acknowledged by then: nothing to compare.
   */
  lagMs(replicatedSeq: number | undefined, readAtMs: number): number | undefined {
    const first = this.beats[0];
    if (first === undefined || first.committedAtMs > readAtMs) return undefined;
    const missing = this.firstAfter(replicatedSeq);
    // A beat acknowledged after the read was sent may not have reached the replica yet: not lag.
    if (missing === undefined || missing.committedAtMs > readAtMs) return 0;
    return readAtMs - missing.committedAtMs;
  }

  /** The oldest kept beat the replica has not applied (binary search: beats ascend). */
  private firstAfter(seq: number | undefined): Beat | undefined {
    if (seq === undefined) return this.beats[0];
    let lo = 0;
    let hi = this.beats.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.beats[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return this.beats[lo];
  }
}
