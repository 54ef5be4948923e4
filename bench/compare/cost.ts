/**
 * What a run costs per transition, phase by phase: CPU samples of every process (the
 * contender's own and the stack's) and of the whole machine, taken at T (the instant the rows
 * fall due), when the last transition is seen and when the last event is, then differenced.
 *
 *   expire   T → the last transition: the transitions' own cost (and whatever publishes meanwhile)
 *   publish  the last transition → the last event: the publish tail's cost (stream only)
 *
 * CPU-µs per transition = CPU seconds in the phase × 10^6 / transitions of the run. The machine's
 * figure (from /proc/stat) also holds what no listed process did; its idle share says how much
 * of the 2 cores the run left unused. The bench's own process (BENCH_PROCESS: the harness, which
 * for the stream reads every event back from Kafka) is listed, and `machine_less_bench` is the
 * machine without it: what the system under test and its stack cost.
 */
import { cpuSeconds, machineCpuSeconds } from '../lib/proc';
import type { NamedPid } from '../lib/stack-processes';

export type CostSample = Readonly<{ atMs: number; processes: Readonly<Record<string, number | null>>; machine: { busy: number; idle: number } | null }>;

export type PhaseCost = Readonly<{
  seconds: number;
  /** Per process (contender children by name, stack processes by theirs), CPU-µs per transition. */
  cpu_us_per_transition: Readonly<Record<string, number | null>>;
  /** The listed processes together. */
  processes_cpu_us_per_transition: number;
  /** The machine's busy CPU (everything on it), per transition. */
  machine_cpu_us_per_transition: number | null;
  /** The same without the bench's own process (BENCH_PROCESS). */
  machine_less_bench_cpu_us_per_transition: number | null;
  /** Share of the machine's CPU left idle in the phase, 0..1. */
  machine_idle_share: number | null;
}>;

/** The harness's own process among the sampled ones. */
export const BENCH_PROCESS = 'bench';

export type RunCost = Readonly<{ expire: PhaseCost | null; publish: PhaseCost | null; publish_tail_s: number | null }>;

export function takeSample(pids: readonly NamedPid[]): CostSample {
  return { atMs: Date.now(), processes: Object.fromEntries(pids.map((p) => [p.name, cpuSeconds(p.pid)])), machine: machineCpuSeconds() };
}

export function phaseCost(from: CostSample | undefined, to: CostSample | undefined, transitions: number): PhaseCost | null {
  if (from === undefined || to === undefined || transitions <= 0) return null;
  const us = (s: number) => Math.round((s * 1e6) / transitions);
  const perProcess: Record<string, number | null> = {};
  let total = 0;
  for (const [name, before] of Object.entries(from.processes)) {
    const after = to.processes[name];
    const spent = before === null || after === null || after === undefined ? null : after - before;
    perProcess[name] = spent === null ? null : us(spent);
    total += spent ?? 0;
  }
  const busy = from.machine && to.machine ? to.machine.busy - from.machine.busy : null;
  const idle = from.machine && to.machine ? to.machine.idle - from.machine.idle : null;
  return {
    seconds: Math.round(to.atMs - from.atMs) / 1000,
    cpu_us_per_transition: perProcess,
    processes_cpu_us_per_transition: us(total),
    machine_cpu_us_per_transition: busy === null ? null : us(busy),
    machine_less_bench_cpu_us_per_transition: busy === null ? null : us(busy) - (perProcess[BENCH_PROCESS] ?? 0),
    machine_idle_share: busy === null || idle === null || busy + idle <= 0 ? null : Math.round((idle / (busy + idle)) * 1000) / 1000,
  };
}
