/**
 * The replica's lag from the beat its heartbeat row shows: how long before the read the oldest
 * beat it lacked was committed, on this process's clock alone (core/replica-lag.ts).
 */
import { HeartbeatLog } from '../../../src/core/replica-lag';

/** Beats 1..n committed every 250 ms from t = 1000. */
function beats(n: number, keep?: number): HeartbeatLog {
  const log = new HeartbeatLog(keep);
  for (let seq = 1; seq <= n; seq++) log.committed(seq, 1000 + (seq - 1) * 250);
  return log;
}

test('unknown before any beat is committed, or before one is committed ahead of the read', () => {
  expect(new HeartbeatLog().lagMs(undefined, 5_000)).toBeUndefined();
  const log = beats(1);
  expect(log.lagMs(undefined, 999)).toBeUndefined();
});

test('a replica that shows the last beat committed before the read is caught up', () => {
  const log = beats(4); // beat 4 at 1750
  expect(log.lagMs(4, 1_800)).toBe(0);
  // Beat 4 was acknowledged after this read was sent: the replica may not have it yet, and is not behind for it.
  expect(log.lagMs(3, 1_700)).toBe(0);
});

test('a replica behind is behind by the age, at the read, of the oldest beat it lacks', () => {
  const log = beats(8); // beat 3 at 1500, beat 8 at 2750
  expect(log.lagMs(2, 2_800)).toBe(1_300);
  // The SQL thread stopped: the row stays at beat 2 and the lag grows with each read.
  expect(log.lagMs(2, 3_800)).toBe(2_300);
  // Applying again: it falls as the row moves on.
  expect(log.lagMs(7, 2_800)).toBe(50);
  expect(log.lagMs(8, 2_800)).toBe(0);
});

test('no row on the replica yet: behind since the first beat', () => {
  expect(beats(3).lagMs(undefined, 1_600)).toBe(600);
});

test('only the last `keep` beats are kept: a replica behind all of them reads as behind the oldest kept (a lower bound)', () => {
  const log = beats(10, 4); // kept: beats 7..10, beat 7 at 2500
  expect(log.lagMs(1, 3_500)).toBe(1_000);
  expect(log.last()).toEqual({ seq: 10, committedAtMs: 3_250 });
});

test('a beat not above the last is ignored: beats only go up', () => {
  const log = beats(3);
  log.committed(2, 9_000);
  expect(log.last()).toEqual({ seq: 3, committedAtMs: 1_500 });
});
